// SPDX-License-Identifier: Apache-2.0
/**
 * The Node 24 binary the image runs molt with (Debian bookworm's nodejs is 18): `--node FILE`, or
 * the npm `node` package's binary beside molt (`node_modules/node/bin/node`, a symlink resolved
 * to the real file), or the Node running this command when it is a 24. It must be a glibc x86-64
 * build: it runs on the image's libc6, libstdc++6 and libgcc-s1.
 */
import { realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { packageRoot } from '../../platform/package-files.ts';
import { fileDigest } from './digest.ts';
import { runTool } from './tools.ts';

export const NodeMajor = 24;

export interface NodeBinary {
  readonly path: string;
  readonly version: string;
  readonly digest: string;
}

async function versionOf(path: string): Promise<string | null> {
  try {
    return (await runTool(path, ['--version'], { step: 'node binary' })).trim();
  } catch {
    return null;
  }
}

const isMajor = (version: string): boolean => version.startsWith(`v${NodeMajor}.`);

/** Find and check the Node binary; `MOLT_BAD_FLAG` when `--node` is not a Node 24. */
export async function findNode(given: string | undefined): Promise<NodeBinary> {
  const candidates =
    given === undefined
      ? [join(packageRoot, 'node_modules', 'node', 'bin', 'node'), process.execPath]
      : [given];
  for (const candidate of candidates) {
    const path = await realpath(candidate).catch(() => null);
    if (path === null || !(await stat(path)).isFile()) continue;
    const version = await versionOf(path);
    if (version !== null && isMajor(version))
      return { path, version, digest: await fileDigest(path) };
    if (given !== undefined)
      throw new MoltError(
        ErrorCode.BadFlag,
        `--node ${given} is ${version ?? 'not a runnable Node binary'}, not Node ${NodeMajor}`,
        { hint: `give a Node ${NodeMajor} binary for linux-x64 (glibc)` },
      );
  }
  throw new MoltError(
    given === undefined ? ErrorCode.ImageBuildFailed : ErrorCode.BadFlag,
    given === undefined ? `no Node ${NodeMajor} binary found` : `--node ${given} does not exist`,
    { hint: `install the npm package node@${NodeMajor} beside molt, or give --node FILE` },
  );
}
