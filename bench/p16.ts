// SPDX-License-Identifier: Apache-2.0
/**
 * P16: how fast the CLI answers a person, side by side with kubectl on the same machine. A lab
 * runs (`molt lab up --fast --workers 1`: a real Kubernetes control plane, etcd and the operator);
 * then, ten times each, `molt --version`, `molt rollout list` and `molt plan` against that
 * operator, and `kubectl version --client` and `kubectl get nodes` against the lab's API server.
 * molt runs as the package ships it (`dist/`, built first by `npm run build`) and, for comparison,
 * from the checkout's TypeScript. The figure is the median; `kubectl_ratio` is the slowest of
 * molt's two live commands over `kubectl get nodes` (both ask a server and print a table).
 * Target: `kubectl_ratio ≤ 1.5`.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { readLabStateFile } from '../src/lab/state.ts';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..');
const rounds = 10;

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
};

/** Median wall time of `cmd args` over `rounds` runs (after one warm-up), in ms. */
async function timed(
  cmd: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<number> {
  await run(cmd, [...args], { env });
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    await run(cmd, [...args], { env, maxBuffer: 16 * 1024 * 1024 });
    times.push(performance.now() - t);
  }
  return median(times);
}

export async function runP16(): Promise<void> {
  await run('npm', ['run', '--silent', 'build'], { cwd: root });
  const scratch = await mkdtemp(join(tmpdir(), 'molt-p16-'));
  const dir = join(scratch, 'lab');
  const env = { ...process.env, MOLT_CONFIG: join(scratch, 'config.yaml'), MOLT_LAB_DIR: dir };
  const node = process.execPath;
  const source = join(root, 'src', 'bin', 'molt.ts');
  const shipped = join(root, 'dist', 'bin', 'molt.js');
  await run(node, [source, 'lab', 'up', '--dir', dir, '--fast', '--workers', '1'], {
    env,
    maxBuffer: 64 * 1024 * 1024,
  });
  try {
    const lab = await readLabStateFile(dir);
    if (lab?.kubectl === undefined || lab.kubeconfig === undefined)
      throw new Error('the lab runs without Kubernetes');
    const kubeEnv = { ...env, KUBECACHEDIR: join(scratch, 'kube-cache') };
    const kubectl = (args: string[]) =>
      timed(lab.kubectl ?? 'kubectl', ['--kubeconfig', lab.kubeconfig ?? '', ...args], kubeEnv);
    const molt = (entry: string, args: string[]) => timed(node, [entry, ...args], env);
    const m = {
      version: await molt(shipped, ['--version']),
      list: await molt(shipped, ['rollout', 'list']),
      plan: await molt(shipped, ['plan']),
      sourceVersion: await molt(source, ['--version']),
      sourceList: await molt(source, ['rollout', 'list']),
      kubectlVersion: await kubectl(['version', '--client']),
      kubectlNodes: await kubectl(['get', 'nodes']),
    };
    const ratio = Math.max(m.list, m.plan) / m.kubectlNodes;
    const ms = (x: number): string => `${x.toFixed(0).padStart(6)} ms`;
    console.log(`P16: median of ${String(rounds)} runs each, on this machine, one lab running`);
    console.log(
      `  molt --version          ${ms(m.version)}   kubectl version --client ${ms(m.kubectlVersion)}`,
    );
    console.log(
      `  molt rollout list       ${ms(m.list)}   kubectl get nodes        ${ms(m.kubectlNodes)}`,
    );
    console.log(`  molt plan               ${ms(m.plan)}`);
    console.log(
      `  from the checkout (.ts): --version ${ms(m.sourceVersion)}, rollout list ${ms(m.sourceList)}`,
    );
    console.log(
      `BENCH P16 version_ms=${m.version.toFixed(0)} list_ms=${m.list.toFixed(0)} plan_ms=${m.plan.toFixed(0)} kubectl_ms=${m.kubectlNodes.toFixed(0)} kubectl_ratio=${ratio.toFixed(2)}`,
    );
  } finally {
    await run(node, [source, 'lab', 'down', '--dir', dir], { env }).catch(() => undefined);
    await rm(scratch, { recursive: true, force: true });
  }
}
