// SPDX-License-Identifier: Apache-2.0
/** `molt lab status`: the lab's parts and its fleet, read from the dashboard listener's JSON. */
import { ErrorCode, MoltError } from '../core/errors.ts';
import type { LabIo } from './io.ts';
import { requireLab, type LabState } from './state.ts';

const bold = (s: string): string => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);

interface MachineRow {
  id: string;
  role: string;
  pool: string;
  observed?: { version?: string; phase?: string; reachable: boolean };
}
interface RolloutRow {
  id: string;
  state: string;
  counts: { total: number; Succeeded: number };
}

async function read<T>(base: string, path: string): Promise<T> {
  const res = await fetch(new URL(path, base));
  if (!res.ok) throw new MoltError(ErrorCode.OperatorUnreachable, `${path}: ${String(res.status)}`);
  return (await res.json()) as T;
}

export async function labStatus(dir: string, io: LabIo, json: boolean): Promise<number> {
  const state = await requireLab(dir);
  const dash = state.operator.dashboard;
  const [machines, rollouts] = await Promise.all([
    read<MachineRow[]>(dash, '/v1/machines'),
    read<RolloutRow[]>(dash, '/v1/rollouts'),
  ]);
  if (json) {
    io.out(`${JSON.stringify({ ...state, fleet: machines, rollouts }, null, 2)}\n`);
    return 0;
  }
  io.out(statusText(state, machines, rollouts));
  return 0;
}

function statusHeader(state: LabState): string {
  const net = state.network;
  return [
    `${bold('lab')} ${state.dir} (PID ${String(state.pid)}, since ${state.startedAt})`,
    `  dashboard  ${state.operator.dashboard}`,
    `  operator   ${state.operator.api}`,
    `  registry   ${state.registry}/${state.repository}`,
    ...(state.kubeconfig === undefined ? [] : [`  kubeconfig ${state.kubeconfig}`]),
    ...(net?.mode === 'netns'
      ? [`  network    ${net.subnet ?? ''} on bridge ${net.bridge ?? ''}, a namespace per machine`]
      : []),
  ].join('\n');
}

function machineLine(m: MachineRow, endpoint: string): string {
  const o = m.observed;
  const phase = o?.reachable === false ? 'unreachable' : (o?.phase ?? '?');
  return `  ${m.id.padEnd(8)} ${m.role.padEnd(14)} ${m.pool.padEnd(14)} ${endpoint.padEnd(21)} ${(o?.version ?? '?').padEnd(8)} ${phase}`;
}

function statusText(
  state: LabState,
  machines: readonly MachineRow[],
  rollouts: readonly RolloutRow[],
): string {
  const endpoint = new Map(state.machines.map((m) => [m.id, new URL(m.endpoint).host]));
  return [
    statusHeader(state),
    '',
    '  MACHINE  ROLE           POOL           ENDPOINT              VERSION  PHASE',
    ...machines.map((m) => machineLine(m, endpoint.get(m.id) ?? '?')),
    ...rollouts.map(
      (r) =>
        `  rollout ${r.id}: ${r.state} ${String(r.counts.Succeeded)}/${String(r.counts.total)}`,
    ),
    '',
  ].join('\n');
}
