// SPDX-License-Identifier: Apache-2.0
/**
 * A real containerd of the tests' own (the node runtime's, scripts/ensure-node-bins.sh), in a
 * temporary root and state with its own socket, and its CRI plugin (what the kubelet talks to,
 * and `crictl`) pulling through `hostsDir` as a node's does. No CNI configuration: no pod can
 * run, images can be pulled, listed and removed. Needs root.
 */
import { access, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { eventually, startProcess, tempDir } from '../platform/process/managed-process.ts';

export interface RunningContainerd {
  /** The socket. */
  readonly address: string;
  /** The `ctr` beside the containerd binary. */
  readonly ctr: string;
  /** The `crictl` beside it. */
  readonly crictl: string;
  /** Stops containerd (by its PID) and removes its directory. */
  stop(): Promise<void>;
}

/** Start `<bin>/containerd`; resolves once its socket answers. */
export async function startContainerd(
  bin: string,
  o: { readonly hostsDir: string },
): Promise<RunningContainerd> {
  const dir = await tempDir('containerd');
  const address = join(dir.path, 'c.sock');
  const config = join(dir.path, 'config.toml');
  await writeFile(
    config,
    [
      'version = 3',
      `root = ${JSON.stringify(join(dir.path, 'root'))}`,
      `state = ${JSON.stringify(join(dir.path, 'state'))}`,
      '[grpc]',
      `  address = ${JSON.stringify(address)}`,
      '[ttrpc]',
      `  address = ${JSON.stringify(`${address}.ttrpc`)}`,
      "[plugins.'io.containerd.cri.v1.images'.registry]",
      `  config_path = ${JSON.stringify(o.hostsDir)}`,
      "[plugins.'io.containerd.cri.v1.runtime'.cni]",
      `  conf_dir = ${JSON.stringify(join(dir.path, 'cni'))}`,
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
  return { address, ctr: join(bin, 'ctr'), crictl: join(bin, 'crictl'), stop };
}
