// SPDX-License-Identifier: Apache-2.0
/**
 * A minimal ustar writer for tests: unlike `tar.create`, it writes whatever a test asks for —
 * `..` names, absolute paths, symlinks, devices — so the unsafe-entry checks can be exercised.
 */
import { Buffer } from 'node:buffer';

export interface TarEntry {
  readonly name: string;
  /** ustar type flag: '0' file, '1' hard link, '2' symlink, '3' char device, '4' block device, '5' directory, '6' FIFO. */
  readonly type?: '0' | '1' | '2' | '3' | '4' | '5' | '6';
  readonly body?: Uint8Array;
  readonly linkname?: string;
}

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

function header(e: TarEntry, size: number): Buffer {
  const h = Buffer.alloc(512);
  h.write(e.name, 0, 100, 'utf8');
  h.write(octal(e.type === '5' ? 0o755 : 0o644, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii');
  h.write(octal(0, 8), 116, 'ascii');
  h.write(octal(size, 12), 124, 'ascii');
  h.write(octal(1_700_000_000, 12), 136, 'ascii');
  h.write('        ', 148, 'ascii');
  h.write(e.type ?? '0', 156, 'ascii');
  h.write(e.linkname ?? '', 157, 100, 'utf8');
  h.write('ustar\0' + '00', 257, 'ascii');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return h;
}

/** The bytes of a tar archive holding `entries` (bodies only for regular files), with the end marker. */
export function tarArchive(entries: readonly TarEntry[]): Uint8Array {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const body = (e.type ?? '0') === '0' ? (e.body ?? new Uint8Array(0)) : new Uint8Array(0);
    parts.push(
      header(e, body.byteLength),
      Buffer.from(body),
      Buffer.alloc((512 - (body.byteLength % 512)) % 512),
    );
  }
  parts.push(Buffer.alloc(1024));
  return new Uint8Array(Buffer.concat(parts));
}
