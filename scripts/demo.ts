// SPDX-License-Identifier: Apache-2.0
// `npm run demo` (issue 6): a lab fleet upgraded live, told as a short story. Every step checks
// what happened and the demo exits non-zero if anything differs from what it announced.
//
//   1. `molt lab up`: a registry, a Kubernetes control plane whose nodes are the lab machines (with
//      workloads under PodDisruptionBudgets), 3 control-plane and 3 worker machines, the operator;
//   2. every machine runs 1.0.0;
//   3. 1.1.0 on `stable` and `beta`: control plane first, one at a time; workers after a canary,
//      a third at a time — progress shown as it happens;
//   4. a broken 1.2.0 (boots, never healthy) on `beta`, which the workers follow: the canary rolls
//      back by itself and the rollout halts, with the reason;
//   5. the lab stays up (unless --down): the dashboard URL and commands to explore.
//
// Flags: --fast (2 workers, short soaks), --down (stop the lab at the end), --no-kubernetes,
// --network auto|netns|loopback (auto: a namespace per machine when root), --dir DIR (default
// .molt/lab). `npm run demo -- --basics` runs the earlier single-machine story
// (release discovery, signatures, one machine's A/B upgrade and rollback).
import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { labDown, labPublish, labUp } from '../src/lab/commands.ts';
import { chooseNetworkMode, parseNetworkFlag } from '../src/lab/fleet/network.ts';
import { readLabState, type LabState } from '../src/lab/state.ts';
import type { MachineView, RolloutSummaryView, RolloutView } from '../src/protocol/operator.ts';

const run = promisify(execFile);
const tty = process.stdout.isTTY;
const paint = (code: string) => (s: string) => (tty ? `\x1b[${code}m${s}\x1b[0m` : s);
const bold = paint('1');
const dim = paint('2');
const green = paint('32');
const red = paint('31');

const { values: flags } = parseArgs({
  options: {
    fast: { type: 'boolean', default: false },
    down: { type: 'boolean', default: false },
    'no-kubernetes': { type: 'boolean', default: false },
    basics: { type: 'boolean', default: false },
    dir: { type: 'string' },
    network: { type: 'string', default: 'auto' },
  },
  strict: true,
});

const failures: string[] = [];
const started = performance.now();
const elapsed = (): string =>
  dim(`[${String(Math.round((performance.now() - started) / 1000)).padStart(4)}s]`);

function check(ok: boolean, what: string): void {
  console.log(ok ? `  ${green('✔')} ${what}` : `  ${red('✘ NOT AS EXPECTED:')} ${what}`);
  if (!ok) failures.push(what);
}

const io = {
  out: (line: string) => process.stdout.write(line),
  err: (line: string) => process.stdout.write(line),
};

async function api<T>(lab: LabState, path: string): Promise<T> {
  const res = await fetch(new URL(path, lab.operator.dashboard));
  if (!res.ok) throw new Error(`${path}: ${String(res.status)}`);
  return (await res.json()) as T;
}

async function rolloutsTo(lab: LabState, version: string): Promise<RolloutView[]> {
  const all = await api<RolloutSummaryView[]>(lab, '/v1/rollouts');
  return Promise.all(
    all
      .filter((r) => r.target.version === version)
      .map((r) => api<RolloutView>(lab, `/v1/rollouts/${encodeURIComponent(r.id)}`)),
  );
}

function bar(done: number, total: number): string {
  const width = 12;
  const full = Math.round((width * done) / Math.max(1, total));
  return `${'█'.repeat(full)}${'░'.repeat(width - full)}`;
}

function line(r: RolloutView): string {
  const moving = r.machines.filter((m) => m.phase === 'InFlight').map((m) => m.machine);
  const failed = r.machines.filter((m) => m.phase === 'Failed' || m.phase === 'RolledBack');
  const detail = [
    moving.length > 0 ? `upgrading ${moving.join(', ')}` : '',
    failed.length > 0 ? red(failed.map((m) => `${m.machine} ${m.phase}`).join(', ')) : '',
  ]
    .filter((x) => x !== '')
    .join('; ');
  return `${r.pool.padEnd(14)} → ${r.target.version}  ${bar(r.counts.Succeeded, r.counts.total)} ${String(r.counts.Succeeded)}/${String(r.counts.total)}  ${r.state.padEnd(9)} ${detail}`;
}

/** Print each rollout to `version` whenever it changes, until `done` says so (or the timeout). */
async function follow(
  lab: LabState,
  version: string,
  done: (rs: RolloutView[]) => boolean,
  timeoutMs: number,
): Promise<RolloutView[]> {
  const shown = new Map<string, string>();
  const live = { lines: 0 };
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const rs = await rolloutsTo(lab, version).catch(() => []);
    if (tty) live.lines = redraw(rs.map(line), live.lines);
    else printChanged(rs, shown);
    if (done(rs) || performance.now() > deadline) return rs;
    await sleep(1000);
  }
}

/** Logs and pipes: a line for each rollout whose line changed since `shown`. */
function printChanged(rs: readonly RolloutView[], shown: Map<string, string>): void {
  for (const r of rs) {
    const text = line(r);
    if (shown.get(r.id) !== text) console.log(`  ${elapsed()} ${text}`);
    shown.set(r.id, text);
  }
}

/**
 * On a terminal: one line per rollout, redrawn in place (cursor up over the previous drawing, each
 * line cleared); returns how many lines it drew. Logs and pipes get a line per change instead.
 */
function redraw(texts: readonly string[], drawn: number): number {
  if (drawn > 0) process.stdout.write(`\x1b[${String(drawn)}A`);
  for (const t of texts) process.stdout.write(`\x1b[2K  ${elapsed()} ${t}\n`);
  return texts.length;
}

async function machines(lab: LabState): Promise<MachineView[]> {
  return api<MachineView[]>(lab, '/v1/machines');
}

/** The machines once the operator has observed every one (at most 30 s). */
async function observedAll(lab: LabState): Promise<MachineView[]> {
  for (let i = 0; ; i++) {
    const all = await machines(lab);
    if (all.every((m) => m.observed?.version !== undefined) || i >= 60) return all;
    await sleep(500);
  }
}

async function kubectl(lab: LabState, ...args: string[]): Promise<string> {
  if (lab.kubeconfig === undefined || lab.kubectl === undefined) return '';
  const { stdout } = await run(lab.kubectl, ['--kubeconfig', lab.kubeconfig, ...args]);
  return stdout;
}

async function showNodes(lab: LabState): Promise<void> {
  if (lab.kubeconfig === undefined) return;
  const columns = [
    'NODE:.metadata.name',
    'READY:.status.conditions[?(@.type=="Ready")].status',
    'MOLT:.metadata.labels.molt\\.dev/version',
    'CORDONED:.spec.unschedulable',
  ].join(',');
  const out = await kubectl(lab, 'get', 'nodes', '-o', `custom-columns=${columns}`);
  if (out !== '') console.log(dim(out.trimEnd().replace(/^/gm, '    ')));
}

async function baseline(lab: LabState): Promise<void> {
  console.log(bold('\n2. Every machine runs release 1.0.0 (installed into slot A at first boot):'));
  // The operator's first look at each agent may still be under way.
  const before = await observedAll(lab);
  for (const m of before)
    console.log(
      `    ${m.id.padEnd(6)} ${m.role.padEnd(14)} pool ${m.pool.padEnd(14)} ${m.observed?.version ?? '?'}`,
    );
  check(
    before.length >= 5 && before.every((m) => m.observed?.version === '1.0.0'),
    `all ${String(before.length)} machines run 1.0.0`,
  );
  await showNodes(lab);
}

async function rollout(lab: LabState): Promise<void> {
  console.log(
    bold('\n3. Release 1.1.0 is published to `stable` and `beta`; the operator discovers it:'),
  );
  await labPublish(lab.dir, { version: '1.1.0', channels: 'stable,beta', broken: false }, io);
  const rs = await follow(
    lab,
    '1.1.0',
    (x) => x.length === 2 && x.every((r) => r.state === 'Completed'),
    15 * 60_000,
  );
  check(rs.length === 2 && rs.every((r) => r.state === 'Completed'), 'both pools completed 1.1.0');
  const cp = rs.find((r) => r.pool === 'control-plane');
  const workers = rs.find((r) => r.pool === 'workers');
  const cpDone = Math.max(...(cp?.machines ?? []).map((m) => Date.parse(m.finishedAt ?? '')));
  const workersFrom = Math.min(
    ...(workers?.machines ?? []).map((m) => Date.parse(m.startedAt ?? '')),
  );
  check(cpDone <= workersFrom, 'the control plane finished before any worker started');
  const after = await machines(lab);
  check(
    after.every((m) => m.observed?.version === '1.1.0'),
    'every machine now boots 1.1.0 (committed in slot B)',
  );
  await showNodes(lab);
}

async function brokenRelease(lab: LabState): Promise<void> {
  console.log(
    bold(
      '\n4. A broken 1.2.0 (boots, never becomes healthy) goes to `beta`, which the workers follow:',
    ),
  );
  await labPublish(lab.dir, { version: '1.2.0', channels: 'beta', broken: true }, io);
  const [broken] = await follow(lab, '1.2.0', (x) => x[0]?.state === 'Halted', 10 * 60_000);
  check(broken?.state === 'Halted', 'the rollout halted');
  const touched = (broken?.machines ?? []).filter((m) => m.phase !== 'Pending');
  check(
    touched.length === 1 && touched[0]?.phase === 'RolledBack',
    'only the canary started, and it rolled back by itself',
  );
  console.log(
    `    reason: ${touched[0]?.machine ?? '?'} — ${touched[0]?.reason ?? 'no reason recorded'}`,
  );
  const final = await machines(lab);
  check(
    final.every((m) => m.observed?.version === '1.1.0'),
    'every machine is still on 1.1.0',
  );
}

function explore(lab: LabState): void {
  console.log(bold('\n5. Explore:'));
  console.log(`    dashboard        ${lab.operator.dashboard}`);
  console.log('    eval "$(npm run -s molt -- lab env)"   # then: npm run -s molt -- rollout list');
  console.log('    npm run -s molt -- rollout status <id> --follow');
  const worker = lab.machines.find((m) => m.role === 'worker');
  if (worker !== undefined)
    console.log(
      `    npm run -s molt -- node events --follow --endpoint ${worker.endpoint}   # ${worker.id}'s journal, live`,
    );
  console.log('    npm run -s molt -- lab status | lab down');
  if (lab.kubectl !== undefined && lab.kubeconfig !== undefined)
    console.log(`    ${lab.kubectl} get molt -n molt-system   # after the eval above`);
}

/** Step 1: `molt lab up` (after stopping a lab an earlier run left up), checked. */
async function upLab(dir: string): Promise<LabState> {
  if ((await readLabState(dir)) !== undefined) {
    console.log(dim(`  a lab from an earlier run is up in ${dir}: stopping it first`));
    await labDown(dir, io);
  }
  const lab = await labUp(
    {
      dir,
      workers: flags.fast ? 2 : 3,
      kubernetes: !flags['no-kubernetes'],
      fast: flags.fast,
      dashboardPort: 0,
      network: await chooseNetworkMode(parseNetworkFlag(flags.network)),
      // The demo runs molt from this checkout's sources (Node strips the types).
      molt: [process.execPath, join(import.meta.dirname, '../src/bin/molt.ts')],
    },
    io,
  );
  check(
    lab.machines.length === (flags.fast ? 5 : 6),
    `${String(lab.machines.length)} lab machines, a registry and the operator are up`,
  );
  if (lab.network?.mode === 'netns') {
    const hosts = lab.machines.map((m) => new URL(m.endpoint).hostname);
    check(
      new Set(hosts).size === hosts.length,
      `each machine in a network namespace of its own, at its own address (${hosts.join(', ')}) on ${lab.network.subnet ?? '?'}`,
    );
  }
  return lab;
}

async function main(): Promise<number> {
  if (flags.basics) {
    await import('./demo-basics.ts'); // sets process.exitCode itself
    return Number(process.exitCode ?? 0);
  }
  console.log(bold('molt — a lab fleet upgraded live\n'));
  console.log(bold('1. Start a lab (molt lab up):'));
  const dir = resolve(flags.dir ?? '.molt/lab');
  const lab = await upLab(dir);
  try {
    await baseline(lab);
    await rollout(lab);
    await brokenRelease(lab);
  } catch (e) {
    failures.push(String(e));
    console.log(red(`  ✘ ${String(e)}`));
  }
  explore(lab);
  if (flags.down) await labDown(dir, io);
  else console.log(dim(`\n  The lab keeps running in ${dir} until \`molt lab down\`.`));
  if (failures.length > 0) {
    console.error(
      red(`\ndemo FAILED: ${String(failures.length)} step(s) did not happen as described`),
    );
    return 1;
  }
  console.log(
    bold(
      `\nEvery step happened as described (${String(Math.round((performance.now() - started) / 1000))} s).`,
    ),
  );
  return 0;
}

process.exitCode = await main();
