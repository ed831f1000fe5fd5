// SPDX-License-Identifier: Apache-2.0
/**
 * A minimal `newc` cpio writer (the initramfs format the Linux kernel unpacks): directories,
 * regular files, symlinks and character devices, no compression. Enough for a one-binary busybox initramfs
 * without needing the `cpio` tool on the machine.
 */

export type CpioEntry =
  | { readonly kind: 'dir'; readonly name: string }
  | {
      readonly kind: 'file';
      readonly name: string;
      readonly data: Uint8Array;
      readonly mode?: number;
    }
  | { readonly kind: 'symlink'; readonly name: string; readonly target: string }
  | {
      readonly kind: 'chardev';
      readonly name: string;
      readonly major: number;
      readonly minor: number;
    };

const MODE = { dir: 0o040755, file: 0o100644, symlink: 0o120777, chardev: 0o020600 } as const;

function hex8(n: number): string {
  return n.toString(16).padStart(8, '0');
}

function pad4(n: number): number {
  return (4 - (n % 4)) % 4;
}

function record(ino: number, entry: CpioEntry | null): Buffer[] {
  const name = entry?.name ?? 'TRAILER!!!';
  let data: Uint8Array = new Uint8Array(0);
  if (entry?.kind === 'file') data = entry.data;
  else if (entry?.kind === 'symlink') data = Buffer.from(entry.target, 'latin1');
  let mode = 0;
  if (entry?.kind === 'file') mode = 0o100000 | (entry.mode ?? 0o644);
  else if (entry) mode = MODE[entry.kind];
  const dev = entry?.kind === 'chardev' ? entry : { major: 0, minor: 0 };
  const fields = [
    ino,
    mode,
    0,
    0,
    1,
    0,
    data.length,
    0,
    0,
    dev.major,
    dev.minor,
    name.length + 1,
    0,
  ];
  const header = `070701${fields.map(hex8).join('')}`;
  const head = Buffer.from(`${header}${name}\0`, 'latin1');
  return [
    head,
    Buffer.alloc(pad4(head.length)),
    Buffer.from(data),
    Buffer.alloc(pad4(data.length)),
  ];
}

/** The archive bytes of `entries`, in order (parents before children), with the trailer. */
export function cpioNewc(entries: readonly CpioEntry[]): Buffer {
  const parts = entries.flatMap((e, i) => record(i + 1, e));
  return Buffer.concat([...parts, ...record(0, null)]);
}
