// SPDX-License-Identifier: Apache-2.0
/**
 * A real containerd of the tests' own (the node runtime's, scripts/ensure-node-bins.sh), in a
 * temporary root and state with its own socket, the CRI plugins off: the content and image
 * services are what `ctr images` uses, and they need nothing a test host lacks. Needs root.
 */
import { access, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { eventually, startProcess, tempDir } from '../platform/process/managed-process.ts';

export interface RunningContainerd {
  /** The socket. */
  readonly address: string;
  /** The `ctr` beside the containerd binary. */
  readonly ctr: string;
  /** Stops containerd (by its PID) and removes its directory. */
  stop(): Promise<void>;
}

/** Start `<bin>/containerd`; resolves once its socket answers. */
export async function startContainerd(bin: string): Promise<RunningContainerd> {
  const dir = await tempDir('containerd');
  const address = join(dir.path, 'c.sock');
  const config = join(dir.path, 'config.toml');
  await writeFile(
    config,
    [
      'version = 3',
      `root = ${JSON.stringify(join(dir.path, 'root'))}`,
      `state = ${JSON.stringify(join(dir.path, 'state'))}`,
      'disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime", "io.containerd.cri.v1.images"]',
      '[grpc]',
      `  address = ${JSON.stringify(address)}`,
      '[ttrpc]',
      `  address = ${JSON.stringify(`${address}.ttrpc`)}`,
      '',
    ].join('\n'),
  );
  const proc = startProcess('containerd', join(bin, 'containerd'), ['--config', config]);
  const stop = async (): Promise<void> => {
    await proc.stop(5_000);
    await dir.remove();
  };
  try {
    await eventually(
      async () => {
        if ((await Promise.race([proc.exited, Promise.resolve('running')])) !== 'running')
          throw new Error(`containerd exited:\n${proc.output().slice(-2000)}`);
        await access(address);
        await proc.waitFor(/containerd successfully booted/, 100);
      },
      { timeoutMs: 20_000 },
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { address, ctr: join(bin, 'ctr'), stop };
}
