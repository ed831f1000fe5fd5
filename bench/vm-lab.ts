// SPDX-License-Identifier: Apache-2.0
/**
 * The lab a VM benchmark runs in (P13, P14): `molt lab up --vms 2 --workers 0 --fast` with
 * Kubernetes in a directory of its own under .molt, its CLI context in a config file of its own,
 * stopped and removed afterwards (`MOLT_BENCH_KEEP=1` keeps the directory).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { labDown, labUp } from '../src/lab/commands.ts';
import type { LabOptions } from '../src/lab/lab.ts';
import type { LabState } from '../src/lab/state.ts';

const repoRoot = join(import.meta.dirname, '..');
/** molt as the benchmarks run it: this checkout's sources. */
export const moltArgv = [process.execPath, join(repoRoot, 'src/bin/molt.ts')];

/** Up a lab of two VM nodes with `options`, run `measure` on it (told how long `up` took), then down. */
export async function withVmLab(
  name: string,
  options: Pick<LabOptions, 'network' | 'operator'>,
  measure: (lab: LabState, upSeconds: number) => Promise<void>,
): Promise<void> {
  const dir = await mkdtemp(join(repoRoot, '.molt', `${name}-`));
  const io = {
    out: (l: string) => process.stderr.write(l),
    err: (l: string) => process.stderr.write(l),
    env: { ...process.env, MOLT_CONFIG: join(dir, 'molt-config.yaml') },
  };
  try {
    const t = performance.now();
    const lab = await labUp(
      {
        ...{ dir, workers: 0, vms: 2, kubernetes: true, fast: true },
        ...{ dashboardPort: 0, molt: moltArgv, ...options },
      },
      io,
    );
    await measure(lab, (performance.now() - t) / 1000);
  } finally {
    await labDown(dir, io).catch((e: unknown) => {
      process.stderr.write(`lab down: ${String(e)}\n`);
    });
    if (process.env['MOLT_BENCH_KEEP'] !== '1') await rm(dir, { recursive: true, force: true });
    else process.stdout.write(`kept ${dir}\n`);
  }
}
