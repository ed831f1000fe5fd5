// SPDX-License-Identifier: Apache-2.0
/**
 * What the host reads from a powered-off machine's disk with the bootloaders' own tools: the ESP
 * is copied out with mtools (no loop device, no mount) and read with `grub-editenv` (GRUB) or
 * `bootctl` (systemd-boot, the copy scripts/setup.sh extracts) — the same view the firmware gets
 * at the next power-on.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const repoRoot = join(import.meta.dirname, '../../..');
const mtoolsEnv = { ...process.env, MTOOLS_SKIP_CHECK: '1' };

/** Byte offset of partition `name` (a GPT name) on `disk`. */
async function partitionOffset(disk: string, name: string): Promise<number> {
  const { stdout } = await run('sfdisk', ['--json', disk]);
  const table = JSON.parse(stdout) as {
    partitiontable: { sectorsize?: number; partitions: { name?: string; start: number }[] };
  };
  const p = table.partitiontable.partitions.find((x) => x.name === name);
  if (p === undefined) throw new Error(`${disk} has no partition ${name}`);
  return p.start * (table.partitiontable.sectorsize ?? 512);
}

/** Copy the ESP's files out of `disk` into a temp dir and run `read` on it. */
export async function withEsp<T>(disk: string, read: (esp: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'molt-esp-'));
  // bootctl reads only the root of a file system: the copy goes onto a tmpfs of its own (root).
  await run('mount', ['-t', 'tmpfs', '-o', 'size=256m,mode=0755', 'tmpfs', dir]);
  try {
    const offset = await partitionOffset(disk, 'molt-esp');
    await run(
      'mcopy',
      ['-s', '-n', '-i', `${disk}@@${String(offset)}`, '::/grub', '::/loader', dir],
      {
        env: mtoolsEnv,
      },
    ).catch(async () => {
      // Only one of the two bootloaders' folders exists: copy whichever is there.
      for (const f of ['grub', 'loader'])
        await run('mcopy', ['-s', '-n', '-i', `${disk}@@${String(offset)}`, `::/${f}`, dir], {
          env: mtoolsEnv,
        }).catch(() => undefined);
    });
    return await read(dir);
  } finally {
    await run('umount', [dir]);
    await rm(dir, { recursive: true, force: true });
  }
}

/** `grub-editenv grubenv list` of the disk's ESP: `name=value` lines. */
export async function grubEnv(disk: string): Promise<Record<string, string>> {
  return withEsp(disk, async (esp) => {
    const { stdout } = await run('grub-editenv', [join(esp, 'grub', 'grubenv'), 'list']);
    return Object.fromEntries(
      stdout
        .split('\n')
        .filter((l) => l.includes('='))
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
  });
}

export interface BootctlView {
  /** Entry ids (file names without `.conf`) in menu order. */
  readonly ids: readonly string[];
  /** The file name of the entry bootctl marks `(default)`. */
  readonly defaultFile: string | undefined;
  /** Kernel options by entry id. */
  readonly options: Readonly<Record<string, string>>;
}

/** `bootctl list` of the disk's ESP: systemd-boot's menu as systemd itself reads it. */
export async function bootctlView(disk: string): Promise<BootctlView> {
  return withEsp(disk, async (esp) => {
    const bootctl = async (json: boolean): Promise<string> =>
      (
        await run(
          join(repoRoot, '.molt/tools/bootctl'),
          [`--esp-path=${esp}`, '--no-variables', ...(json ? ['--json=short'] : []), 'list'],
          {
            env: {
              ...process.env,
              SYSTEMD_RELAX_ESP_CHECKS: '1',
              SYSTEMD_COLORS: '0',
              SYSTEMD_PAGER: 'cat',
            },
          },
        )
      ).stdout;
    const listed = (await bootctl(true))
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as { id: string; options?: string });
    const block = (await bootctl(false))
      .split(/\n\s*\n/)
      .find((b) => /title: .*\(default\)/.test(b));
    const source = block === undefined ? undefined : /source: (\S+)/.exec(block)?.[1];
    // bootctl 252 names an entry by its file name (`molt-b.conf`).
    const id = (e: { id: string }): string => e.id.replace(/\.conf$/, '');
    return {
      ids: listed.map(id),
      defaultFile: source?.split('/').pop(),
      options: Object.fromEntries(listed.map((e) => [id(e), e.options ?? ''])),
    };
  });
}
