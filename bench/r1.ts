// SPDX-License-Identifier: Apache-2.0
/**
 * Benchmark R1 (docs/adr/0005 "Under load"): one `molt operator` process (the shipped
 * build, `dist/`, store `memory`, the API on mTLS and the dashboard listener) over N simulated
 * agents (`r1-agents.ts`: 4 child processes, one mTLS listener per machine, each with a node
 * certificate naming its machine) and a real registry (docker-registry 2.8 on loopback). Pools:
 * `canary`, every tenth machine, follows channel `stable` with `concurrency: 50%`; `fleet`, the
 * other 90 %, follows `lts`. Release 1.0.0 (both channels) is what every machine boots.
 *
 * After the operator has made 2 passes, a steady window (`MOLT_R1_STEADY_S`, default 20 s); then
 * 1.1.0 is published in `stable` only, so discovery rolls it out to the 10 % canary pool, and the
 * run waits for that rollout to complete. All along: operator VmRSS every second (and VmHWM at the
 * end), every reconcile pass's duration (from `/metrics`), the API (`GET /v1/rollouts`,
 * `/v1/machines` every second each) and the dashboard listener (the page's three reads every
 * 2 s) timed per answer. At the end every simulated agent says how many upgrade POSTs it got per
 * image: a canary machine with none is a missed start, any machine with more than one for the
 * same image a duplicated start, a `fleet` machine with any a stray start.
 *
 * `npm run bench -- R1` measures 500 and 2,000 machines and prints both rows, how each figure grew,
 * and `BENCH R1 …` for the largest; `MOLT_R1_MACHINES=50` (a comma list) picks other counts.
 */
import { execFile, fork, type ChildProcess } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { ReleaseLabel } from '../src/core/releases/release.ts';
import { createRegistryClient, pushImage } from '../src/oci/index.ts';
import { buildInstallerImage, pushInstallerImage } from '../src/lab/services/installer-image.ts';
import { startRegistry } from '../src/lab/services/registry.ts';
import { initCaDir, issueToDir } from '../src/platform/pki/store.ts';
import {
  eventually,
  startProcess,
  tempDir,
  type ManagedProcess,
} from '../src/platform/process/managed-process.ts';
import { OperatorDashboardPrefix, OperatorServingPrefix } from '../src/protocol/operator.ts';
import type { SimConfig, SimCounts, SimMessage } from './r1-agents.ts';
import { cpuSeconds, percentile, procMb, Probe } from './r1-probe.ts';

const repoRoot = join(import.meta.dirname, '..');
const repository = 'molt/installer';
const shares = 4;
const steadyMs = Number(process.env['MOLT_R1_STEADY_S'] ?? 20) * 1000;
const fromSource = process.env['MOLT_R1_SOURCE'] === '1';
const rolloutTimeoutMs = Number(process.env['MOLT_R1_ROLLOUT_TIMEOUT_S'] ?? 900) * 1000;
const run = promisify(execFile);

/** One measured fleet size. */
interface Row {
  readonly machines: number;
  readonly certS: number;
  readonly steadyRssMb: number;
  readonly peakRssMb: number;
  readonly passes: number;
  readonly passesSeen: number;
  readonly passP50Ms: number;
  readonly passP99Ms: number;
  readonly steadyPassP50Ms: number;
  readonly rolloutPassP50Ms: number;
  readonly apiP99Ms: number;
  readonly apiP50Ms: number;
  readonly dashboardP99Ms: number;
  readonly failedAnswers: number;
  readonly cpuPerSecondSteady: number;
  readonly toRolloutS: number;
  readonly rolloutS: number;
  readonly canary: number;
  readonly started: number;
  readonly missed: number;
  readonly duplicates: number;
  readonly stray: number;
}

interface Agents {
  readonly endpoints: Map<string, number>;
  readonly certS: number;
  counts(): Promise<Record<string, SimCounts>>;
  stop(): void;
}

/** Fork the simulated agents, `ids` dealt round-robin over {@link shares} processes. */
async function startAgents(ids: readonly string[], base: Omit<SimConfig, 'ids'>): Promise<Agents> {
  const children: ChildProcess[] = [];
  const endpoints = new Map<string, number>();
  const t0 = performance.now();
  const n = Math.min(shares, ids.length);
  const ready = Array.from({ length: n }, (_, k) => {
    const child = fork(join(import.meta.dirname, 'r1-agents.ts'), [], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    children.push(child);
    return new Promise<void>((resolve, reject) => {
      child.once('exit', (code) => {
        reject(new Error(`simulated agents ${String(k)} exited (${String(code)})`));
      });
      child.once('message', (m: SimMessage) => {
        if (m.type === 'ready')
          for (const [id, port] of Object.entries(m.endpoints)) endpoints.set(id, port);
        resolve();
      });
      child.send({ ...base, ids: ids.filter((_, i) => i % n === k) } satisfies SimConfig);
    });
  });
  try {
    await Promise.all(ready);
  } catch (e) {
    for (const c of children) c.kill();
    throw e;
  }
  return {
    endpoints,
    certS: (performance.now() - t0) / 1000,
    async counts() {
      const all = await Promise.all(
        children.map(
          (c) =>
            new Promise<Record<string, SimCounts>>((resolve) => {
              const on = (m: SimMessage): void => {
                if (m.type !== 'counts') return;
                c.off('message', on);
                resolve(m.counts);
              };
              c.on('message', on);
              c.send({ type: 'counts' });
            }),
        ),
      );
      return Object.assign({}, ...all) as Record<string, SimCounts>;
    },
    stop() {
      for (const c of children) {
        c.removeAllListeners('exit');
        c.kill();
      }
    },
  };
}

const idOf = (i: number): string => `m-${String(i).padStart(4, '0')}`;
const isCanary = (i: number): boolean => i % 10 === 0;

/** The fleet file and operator config for `agents`; returns the config's path. */
async function writeConfig(
  dir: string,
  registry: string,
  agents: Agents,
  n: number,
): Promise<string> {
  const machines = Array.from({ length: n }, (_, i) => ({
    id: idOf(i),
    pool: isCanary(i) ? 'canary' : 'fleet',
    endpoint: `https://127.0.0.1:${String(agents.endpoints.get(idOf(i)))}`,
  }));
  const fleet = {
    pools: [
      { name: 'canary', channel: 'stable', policies: [{ concurrency: '50%' }] },
      { name: 'fleet', channel: 'lts' },
    ],
    machines,
  };
  await writeFile(join(dir, 'fleet.yaml'), stringify(fleet));
  const config = {
    registry,
    repository,
    insecure: true,
    fleet: 'fleet.yaml',
    pki: {
      ca: 'pki/ca.pem',
      cert: 'pki/operator.pem',
      key: 'pki/operator.key',
      serverCert: 'pki/operator-api.pem',
      serverKey: 'pki/operator-api.key',
    },
    store: 'memory',
    id: 'bench-r1',
    listen: { host: '127.0.0.1', port: 0 },
    dashboard: { listen: { host: '127.0.0.1', port: 0 }, anonymousRead: true },
  };
  const path = join(dir, 'operator.yaml');
  await writeFile(path, stringify(config));
  return path;
}

const release = (version: string, channels: string) => ({
  version,
  labels: { [ReleaseLabel.Channels]: channels, [ReleaseLabel.Official]: 'true' },
});

const ms = (values: readonly number[], p: number): number => Math.round(percentile(values, p));

/** Count starts per machine from what every simulated agent received. */
function startsOf(counts: Record<string, SimCounts>, n: number, image: string) {
  let started = 0;
  let missed = 0;
  let duplicates = 0;
  let stray = 0;
  for (let i = 0; i < n; i++) {
    const c = counts[idOf(i)];
    const got = c?.upgrades[image] ?? 0;
    if (Object.values(c?.upgrades ?? {}).some((k) => k > 1)) duplicates++;
    if (isCanary(i) && got === 0) missed++;
    if (isCanary(i) && got > 0) started++;
    if (!isCanary(i) && Object.keys(c?.upgrades ?? {}).length > 0) stray++;
  }
  return { started, missed, duplicates, stray };
}

interface RolloutSummary {
  readonly id: string;
  readonly pool: string;
  readonly state: string;
  readonly target: { readonly version: string };
}

/** Measure one fleet of `n` machines. */
async function measure(n: number): Promise<Row> {
  const scratch = await tempDir('bench-r1');
  const registry = await startRegistry();
  let agents: Agents | undefined;
  let operator: ManagedProcess | undefined;
  let probe: Probe | undefined;
  try {
    const pkiDir = join(scratch.path, 'pki');
    await initCaDir(pkiDir);
    const issue = (role: 'operator' | 'node', name: string) =>
      issueToDir({ caDir: pkiDir, outDir: pkiDir, role, name, sans: [], days: 1 });
    await issue('operator', 'operator');
    await issue('node', 'operator-api');
    const client = createRegistryClient({ registry: registry.host, insecure: true });
    const v1 = await pushInstallerImage(
      client,
      repository,
      '1.0.0',
      release('1.0.0', 'stable,lts'),
    );
    const v2spec = release('1.1.0', 'stable');
    // Built now, pushed later: the artifacts are random bytes, so building twice changes the digest.
    const v2 = buildInstallerImage(v2spec).built;
    const v2digest = v2.manifest.descriptor.digest;
    const ids = Array.from({ length: n }, (_, i) => idOf(i));
    agents = await startAgents(ids, {
      caDir: pkiDir,
      releases: { [v1.digest]: '1.0.0', [v2digest]: '1.1.0' },
      digest: v1.digest,
      stepMs: 100,
      rebootMs: 1_000,
    });
    const configPath = await writeConfig(scratch.path, registry.host, agents, n);
    const entry = join(repoRoot, fromSource ? 'src/bin/molt.ts' : 'dist/bin/molt.js');
    // MOLT_R1_CPU_PROF=<dir>: a V8 CPU profile of the operator, written when it stops.
    const prof = process.env['MOLT_R1_CPU_PROF'];
    operator = startProcess('molt operator', process.execPath, [
      ...(prof === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', prof]),
      entry,
      'operator',
      '--config',
      configPath,
    ]);
    const url = async (prefix: string): Promise<string> =>
      ((await operator!.waitFor(new RegExp(`${prefix}(\\S+)`), 120_000))[1] ?? '').replace(
        /\/$/,
        '',
      );
    const apiUrl = await url(OperatorServingPrefix);
    const dashboardUrl = `${await url(OperatorDashboardPrefix)}/`;
    const read = (f: string): Promise<string> => readFile(join(pkiDir, f), 'utf8');
    const tls = {
      ca: await read('ca.pem'),
      cert: await read('operator.pem'),
      key: await read('operator.key'),
    };
    const p = new Probe({ apiUrl, dashboardUrl, tls, pid: operator.pid });
    probe = p;
    await eventually(
      () => {
        if (p.passesOk < 2) throw new Error(`${String(p.passesOk)} passes so far`);
        return Promise.resolve();
      },
      { timeoutMs: 10 * 60_000, intervalMs: 500 },
    ).catch((e: unknown) => {
      // An operator that has not made two passes in 10 min is itself the finding (2,000
      // machines on a loaded 2-core VM): measure on rather than lose the row.
      process.stderr.write(`R1 ${String(n)}: warm-up incomplete, ${(e as Error).message}\n`);
    });
    p.phase = 'steady';
    const cpu0 = await cpuSeconds(operator.pid);
    await new Promise((r) => setTimeout(r, steadyMs));
    const cpuPerSecondSteady = ((await cpuSeconds(operator.pid)) - cpu0) / (steadyMs / 1000);
    p.phase = 'rollout';
    const published = performance.now();
    await pushImage(client, repository, ['1.1.0'], v2);
    await client.close();
    const rolloutOf = async (): Promise<RolloutSummary | undefined> =>
      (await p.get<RolloutSummary[]>('/v1/rollouts')).find(
        (r) => r.pool === 'canary' && r.target.version === '1.1.0',
      );
    await eventually(
      async () => {
        if ((await rolloutOf()) === undefined) throw new Error('no rollout of 1.1.0 yet');
      },
      { timeoutMs: 5 * 60_000, intervalMs: 250 },
    );
    const toRolloutS = (performance.now() - published) / 1000;
    // A rollout that does not complete in time is a result, not a crash: the row says so (NaN)
    // and the missed starts count what it did not reach.
    const completed = await eventually(
      async () => {
        const r = await rolloutOf();
        if (r?.state === 'Halted') throw new Error(`rollout ${r.id} halted`);
        if (r?.state !== 'Completed')
          throw new Error(`rollout ${r?.id ?? '?'}: ${r?.state ?? '?'}`);
      },
      { timeoutMs: rolloutTimeoutMs, intervalMs: 1_000 },
    ).then(
      () => true,
      (e: unknown) => {
        process.stderr.write(
          `R1 ${String(n)}: ${(e as Error).message}\n${operator!.output().slice(-3000)}\n`,
        );
        return false;
      },
    );
    const rolloutS = completed ? (performance.now() - published) / 1000 : Number.NaN;
    p.phase = 'after';
    await new Promise((r) => setTimeout(r, 3_000));
    const peakRssMb = await procMb(operator.pid, 'VmHWM');
    await p.stop();
    probe = undefined;
    const starts = startsOf(await agents.counts(), n, `${registry.host}/${repository}@${v2digest}`);
    const passes = [...p.passes.values()].filter((s) => s.phase !== 'start');
    const durations = passes.map((s) => s.ms);
    const answers = p.answers.filter((a) => a.phase !== 'start');
    const api = answers.filter((a) => a.path.startsWith('api ')).map((a) => a.ms);
    const dashboard = answers.filter((a) => a.path.startsWith('dashboard ')).map((a) => a.ms);
    return {
      machines: n,
      certS: agents.certS,
      steadyRssMb: percentile(
        p.rss.filter((r) => r.phase === 'steady').map((r) => r.mb),
        50,
      ),
      peakRssMb,
      passes: p.passesOk + p.passesFailed,
      passesSeen: p.passes.size,
      passP50Ms: ms(durations, 50),
      passP99Ms: ms(durations, 99),
      steadyPassP50Ms: ms(
        passes.filter((s) => s.phase === 'steady').map((s) => s.ms),
        50,
      ),
      rolloutPassP50Ms: ms(
        passes.filter((s) => s.phase === 'rollout').map((s) => s.ms),
        50,
      ),
      apiP50Ms: ms(api, 50),
      apiP99Ms: ms(api, 99),
      dashboardP99Ms: ms(dashboard, 99),
      failedAnswers: answers.filter((a) => !a.ok).length,
      cpuPerSecondSteady,
      toRolloutS,
      rolloutS,
      canary: ids.filter((_, i) => isCanary(i)).length,
      ...starts,
    };
  } finally {
    await probe?.stop();
    await operator?.stop(10_000);
    agents?.stop();
    await registry.stop();
    await scratch.remove();
  }
}

const fields: readonly [string, (r: Row) => string][] = [
  ['machines', (r) => String(r.machines)],
  ['agents ready (certs + listeners), s', (r) => r.certS.toFixed(1)],
  ['operator VmRSS steady (median), MB', (r) => r.steadyRssMb.toFixed(1)],
  ['operator VmHWM (peak), MB', (r) => r.peakRssMb.toFixed(1)],
  ['operator CPU while steady, cores', (r) => r.cpuPerSecondSteady.toFixed(2)],
  ['reconcile passes (seen / run)', (r) => `${String(r.passesSeen)} / ${String(r.passes)}`],
  ['pass p50 / p99, ms', (r) => `${String(r.passP50Ms)} / ${String(r.passP99Ms)}`],
  [
    'pass p50 steady / in rollout, ms',
    (r) => `${String(r.steadyPassP50Ms)} / ${String(r.rolloutPassP50Ms)}`,
  ],
  ['API p50 / p99, ms', (r) => `${String(r.apiP50Ms)} / ${String(r.apiP99Ms)}`],
  ['dashboard listener p99, ms', (r) => String(r.dashboardP99Ms)],
  ['failed answers (not 200)', (r) => String(r.failedAnswers)],
  ['publish → rollout created, s', (r) => r.toRolloutS.toFixed(1)],
  ['publish → rollout completed, s', (r) => r.rolloutS.toFixed(1)],
  ['canary machines / started', (r) => `${String(r.canary)} / ${String(r.started)}`],
  [
    'missed / duplicated / stray starts',
    (r) => `${String(r.missed)} / ${String(r.duplicates)} / ${String(r.stray)}`,
  ],
];

/** Growth of a figure from the first row to the last, against the machine count's. */
const growth: readonly [string, (r: Row) => number][] = [
  ['operator VmRSS steady', (r) => r.steadyRssMb],
  ['operator VmHWM', (r) => r.peakRssMb],
  ['CPU while steady', (r) => r.cpuPerSecondSteady],
  ['pass p50', (r) => r.passP50Ms],
  ['pass p99', (r) => r.passP99Ms],
  ['API p99', (r) => r.apiP99Ms],
  ['dashboard p99', (r) => r.dashboardP99Ms],
  ['rollout completed', (r) => r.rolloutS],
];

function report(rows: readonly Row[]): string[] {
  const width = 40;
  const lines = [
    `R1: one molt operator (${fromSource ? 'from source' : 'dist'}, store memory) over N simulated mTLS agents; 10 % of them (pool canary,`,
    'concurrency 50 %) roll out 1.1.0; API GET /v1/rollouts and /v1/machines each every 1 s, dashboard page reads every 2 s',
    '',
    ...fields.map(
      ([label, f]) => `${label.padEnd(width)}${rows.map((r) => f(r).padStart(14)).join('')}`,
    ),
  ];
  const first = rows[0];
  const last = rows.at(-1);
  if (first !== undefined && last !== undefined && last !== first) {
    lines.push(
      '',
      `growth ${String(first.machines)} → ${String(last.machines)} machines (×${(last.machines / first.machines).toFixed(1)}):`,
    );
    for (const [label, f] of growth)
      lines.push(
        `  ${label.padEnd(width - 2)}×${(f(first) === 0 ? 0 : f(last) / f(first)).toFixed(2)}`,
      );
  }
  return lines;
}

/** Run R1 and print its table and `BENCH R1 …` line. */
export async function runR1(): Promise<void> {
  const counts = (process.env['MOLT_R1_MACHINES'] ?? '500,2000').split(',').map(Number);
  // The shipped operator is the built one, page included (`npm run build`): build it, so the
  // measurement is of the current sources.
  if (!fromSource) {
    await run(join(repoRoot, 'node_modules/.bin/tsc'), ['-b'], { cwd: repoRoot });
    await run(process.execPath, [join(repoRoot, 'scripts/build-assets.ts')], { cwd: repoRoot });
  }
  const rows: Row[] = [];
  for (const n of counts) {
    process.stderr.write(`R1: measuring ${String(n)} machines…\n`);
    const row = await measure(n);
    rows.push(row);
    // Each row as soon as it is measured: a larger fleet that takes long must not hide it.
    process.stderr.write(`${report([row]).slice(3).join('\n')}\n`);
  }
  process.stdout.write(`${report(rows).join('\n')}\n`);
  const r = rows.at(-1);
  if (r === undefined) return;
  process.stdout.write(
    `BENCH R1 machines=${String(r.machines)} rss_mb=${r.peakRssMb.toFixed(1)} pass_p99_ms=${String(r.passP99Ms)} api_p99_ms=${String(r.apiP99Ms)} dashboard_p99_ms=${String(r.dashboardP99Ms)} missed_starts=${String(r.missed)} duplicate_starts=${String(r.duplicates)}\n`,
  );
}
