// SPDX-License-Identifier: Apache-2.0
// The demo's reach into the lab (its API, its kubectl) and its rollout progress: each rollout to a
// version as a line with a bar, redrawn in place on a terminal and printed on every change
// otherwise (logs, CI), read from the dashboard listener.
import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { LabState } from '../src/lab/state.ts';
import type { RolloutSummaryView, RolloutView } from '../src/protocol/operator.ts';
import { elapsed, red, tty } from './demo-terminal.ts';

const run = promisify(execFile);

/** The lab's kubectl with its admin kubeconfig; '' without Kubernetes (`--no-kubernetes`). */
export async function kubectl(lab: LabState, ...args: string[]): Promise<string> {
  if (lab.kubeconfig === undefined || lab.kubectl === undefined) return '';
  const { stdout } = await run(lab.kubectl, ['--kubeconfig', lab.kubeconfig, ...args]);
  return stdout;
}

export async function api<T>(lab: LabState, path: string): Promise<T> {
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
    moving.length > 0
      ? `${r.images === undefined ? 'upgrading' : 'moving'} ${moving.join(', ')}`
      : '',
    failed.length > 0 ? red(failed.map((m) => `${m.machine} ${m.phase}`).join(', ')) : '',
  ]
    .filter((x) => x !== '')
    .join('; ');
  // An image rollout's pool names its tag already: the digest is what moves.
  const target = r.images === undefined ? r.target.version : r.target.digest.slice(0, 19);
  return `${r.pool.padEnd(14)} → ${target}  ${bar(r.counts.Succeeded, r.counts.total)} ${String(r.counts.Succeeded)}/${String(r.counts.total)}  ${r.state.padEnd(9)} ${detail}`;
}

/** Print each rollout to `version` whenever it changes, until `done` says so (or the timeout). */
export async function follow(
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
