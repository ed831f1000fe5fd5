// SPDX-License-Identifier: Apache-2.0
/**
 * The programs the installer drives, always with argument arrays (execFile, never a shell: a disk
 * path is data, not syntax). A program that is not installed is `MOLT_TOOL_MISSING` naming the
 * Debian package that brings it; any other failure carries the program's own stderr.
 */
import { execFile } from 'node:child_process';
import { ErrorCode, MoltError } from '../../core/errors.ts';

/** Debian packages of the programs molt runs (scripts/setup.sh installs them). */
const packages: Readonly<Record<string, string>> = {
  sfdisk: 'fdisk',
  wipefs: 'util-linux',
  blkid: 'util-linux',
  'mkfs.vfat': 'dosfstools',
  mcopy: 'mtools',
  mmd: 'mtools',
  mke2fs: 'e2fsprogs',
  debugfs: 'e2fsprogs',
  'grub-mkimage': 'grub-common grub-efi-amd64-bin',
};

export interface RunOptions {
  /** Written to the program's stdin. */
  readonly input?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Exit codes that are answers, not failures (sfdisk: 1 = no partition table). */
  readonly okCodes?: readonly number[];
}

export interface RunResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Run `cmd args`; resolve with its output, reject when it fails (see {@link RunOptions.okCodes}). */
export function run(
  cmd: string,
  args: readonly string[],
  options: RunOptions = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      cmd,
      args,
      { env: options.env ?? process.env, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        if (error !== null && (error as NodeJS.ErrnoException).code === 'ENOENT') {
          reject(
            new MoltError(ErrorCode.ToolMissing, `${cmd} is not installed`, {
              hint: `apt install ${packages[cmd] ?? cmd} (or run scripts/setup.sh)`,
              cause: error,
            }),
          );
          return;
        }
        if (error !== null && !(options.okCodes ?? []).includes(code)) {
          reject(
            new Error(`${cmd} ${args.join(' ')} failed (exit ${String(code)}): ${stderr.trim()}`),
          );
          return;
        }
        resolve({ code, stdout, stderr });
      },
    );
    // A program that exits without reading its input closes the pipe: its exit code says why.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(options.input ?? '');
  });
}

/** mtools on a disk image without checking that the FAT's geometry matches a floppy's. */
export const mtoolsEnv: NodeJS.ProcessEnv = { ...process.env, MTOOLS_SKIP_CHECK: '1' };
