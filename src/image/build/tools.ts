// SPDX-License-Identifier: Apache-2.0
/**
 * The host tools `molt image build` drives (mmdebstrap, tar, npm, mksquashfs, veritysetup, chroot): each run
 * keeps the tail of its output, so a failure is a `MOLT_IMAGE_BUILD_FAILED` naming the step, the
 * command and its last lines, not a stack trace; a tool that is not installed says which Debian
 * package brings it.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { ErrorCode, MoltError } from '../../core/errors.ts';

/** The Debian package of each tool the build needs (scripts/qemu-setup.sh installs them). */
const packageOf: Readonly<Record<string, string>> = {
  mmdebstrap: 'mmdebstrap',
  mksquashfs: 'squashfs-tools',
  unsquashfs: 'squashfs-tools',
  veritysetup: 'cryptsetup-bin',
  tar: 'tar',
  zstd: 'zstd',
  npm: 'npm',
  chroot: 'coreutils',
};

export interface RunOptions {
  /** What the build was doing, for the error message ("base tree", "squashfs"). */
  readonly step: string;
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Every line the tool prints, as it prints it (`--verbose`). */
  readonly onOutput?: (text: string) => void;
}

const TailBytes = 4000;

/** Run `command` to completion; resolves with its stdout, rejects with MOLT_IMAGE_BUILD_FAILED. */
export function runTool(command: string, args: readonly string[], o: RunOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: o.cwd,
      env: o.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let tail = '';
    const keep = (chunk: Buffer): void => {
      const text = chunk.toString('utf8');
      tail = (tail + text).slice(-TailBytes);
      o.onOutput?.(text);
    };
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      keep(chunk);
    });
    child.stderr.on('data', keep);
    child.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'ENOENT'
          ? missingTool(command, o.step)
          : failed(o.step, command, `cannot start: ${error.message}`, tail),
      );
    });
    child.once('close', (code, signal) => {
      if (code === 0) resolve(stdout);
      else reject(failed(o.step, command, `exited with ${signal ?? code ?? '?'}`, tail));
    });
  });
}

/** Pipe `from`'s stdout into `to`'s stdin (`tar -c … | tar -x …`); both must succeed. */
export async function runPipe(
  from: readonly [string, readonly string[]],
  to: readonly [string, readonly string[]],
  o: RunOptions,
): Promise<void> {
  const producer = spawn(from[0], from[1], { cwd: o.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const consumer = spawn(to[0], to[1], { cwd: o.cwd, stdio: ['pipe', 'ignore', 'pipe'] });
  producer.stdout.pipe(consumer.stdin);
  const finish = (
    child: ChildProcessByStdio<null | Writable, null | Readable, Readable>,
    name: string,
  ): Promise<void> =>
    new Promise((resolve, reject) => {
      let tail = '';
      child.stderr.on('data', (chunk: Buffer) => {
        tail = (tail + chunk.toString('utf8')).slice(-TailBytes);
      });
      child.once('error', (error: NodeJS.ErrnoException) => {
        reject(error.code === 'ENOENT' ? missingTool(name, o.step) : error);
      });
      child.once('close', (code, signal) => {
        if (code === 0) resolve();
        else reject(failed(o.step, name, `exited with ${signal ?? code ?? '?'}`, tail));
      });
    });
  await Promise.all([finish(producer, from[0]), finish(consumer, to[0])]);
}

function missingTool(command: string, step: string): MoltError {
  const pkg = packageOf[command];
  return new MoltError(ErrorCode.ImageBuildFailed, `${step}: ${command} is not installed`, {
    hint:
      pkg === undefined
        ? `install ${command}`
        : `apt-get install ${pkg} (scripts/qemu-setup.sh installs what molt image build needs)`,
  });
}

function failed(step: string, command: string, what: string, tail: string): MoltError {
  const lines = tail.trimEnd().split('\n').slice(-12).join('\n');
  return new MoltError(
    ErrorCode.ImageBuildFailed,
    `${step}: ${command} ${what}${lines === '' ? '' : `:\n${lines}`}`,
    {
      hint: 'run again with --verbose to see everything the tools printed',
      details: { step, command },
    },
  );
}
