// SPDX-License-Identifier: Apache-2.0
/**
 * The Kubernetes binaries built once per version by scripts/ensure-kube-bins.sh: what the lab runs
 * and what `molt dev publish-kubernetes` publishes by default.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { packageFile } from '../package-files.ts';

/**
 * Build (or find cached) the binaries of `version` (@default the script's, kube-versions.env);
 * resolves with their directory. The script's progress lines (stderr: stages, and a progress bar
 * while it compiles) go to `onProgress`.
 */
export async function kubeBinaries(
  onProgress?: (line: string) => void,
  version?: string,
): Promise<string> {
  return runBuildScript('ensure-kube-bins.sh', version === undefined ? [] : [version], onProgress);
}

/**
 * The node runtime a release carries (kubelet, containerd, the CNI plugins, crictl; docs/adr/0015),
 * built once per version by scripts/ensure-node-bins.sh: `version` a Kubernetes version, or
 * `previous` for kube-versions.env's previous minor (@default its current one). Resolves with the
 * directory `molt image build --kubernetes-node` takes.
 */
export async function nodeBinaries(
  onProgress?: (line: string) => void,
  version?: string,
): Promise<string> {
  const args = version === undefined ? [] : version === 'previous' ? ['--previous'] : [version];
  return runBuildScript('ensure-node-bins.sh', args, onProgress);
}

/**
 * Run `scripts/<script>` (an ensure-*-bins.sh: builds once, caches, prints the directory on its
 * last stdout line) and resolve with that directory; its stderr lines go to `onProgress`.
 */
export async function runBuildScript(
  script: string,
  args: readonly string[],
  onProgress?: (line: string) => void,
): Promise<string> {
  const child = spawn('bash', [packageFile('scripts', script), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  createInterface({ input: child.stderr }).on('line', (line) => {
    stderr += `${line}\n`;
    onProgress?.(line);
  });
  const [code] = (await once(child, 'close')) as [number | null];
  if (code !== 0)
    throw new Error(`scripts/${script} failed (${String(code)}):\n${stderr.slice(-3000)}`);
  return stdout.trim().split('\n').at(-1) ?? '';
}
