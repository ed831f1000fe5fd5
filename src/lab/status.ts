// SPDX-License-Identifier: Apache-2.0
/** `molt lab status`: the lab's parts and its fleet, read from the dashboard listener's JSON. */
import { ErrorCode, MoltError } from '../core/errors.ts';
import { connectFailure } from '../protocol/connect-failure.ts';
import type { LabIo } from './io.ts';
import { alive, requireLab, signInLine, type LabState, type LabVmRecord } from './state.ts';
import { lastLine } from './vm/serial-log.ts';

const bold = (s: string): string => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);

interface MachineRow {
  id: string;
  role: string;
  pool: string;
  observed?: { version?: string; phase?: string; reachable: boolean };
}
/** A lab VM as `molt lab status` shows it: its record, whether QEMU runs, its console's last line. */
interface VmRow extends LabVmRecord {
  running: boolean;
  lastConsoleLine: string;
}

async function vmRows(vms: readonly LabVmRecord[]): Promise<VmRow[]> {
  return Promise.all(
    vms.map(async (v) => ({
      ...v,
      running: alive(v.pid),
      lastConsoleLine: await lastLine(v.serialLog),
    })),
  );
}

function vmLines(vms: readonly VmRow[]): string[] {
  if (vms.length === 0) return [];
  return [
    '',
    '  VM       PID      ACCEL  AGENT                  CONSOLE',
    ...vms.flatMap((v) => [
      `  ${v.name.padEnd(8)} ${(v.running ? String(v.pid) : 'off').padEnd(8)} ${v.accel.padEnd(6)} ${`127.0.0.1:${v.agentPort}`.padEnd(22)} ${v.serialLog}`,
      `           └ ${v.lastConsoleLine.slice(0, 100)}`,
    ]),
  ];
}

interface RolloutRow {
  id: string;
  state: string;
  counts: { total: number; Succeeded: number };
}

/** GET `path` of the lab operator's dashboard listener; failures name it, why, and what to do. */
async function read<T>(state: LabState, path: string): Promise<T> {
  const base = state.operator.dashboard;
  const hint = `the lab daemon (PID ${String(state.pid)}) runs, its operator does not answer: see ${state.dir}/logs; \`molt lab down\` and \`molt lab up\` start it afresh`;
  let res: Response;
  try {
    res = await fetch(new URL(path, base));
  } catch (e) {
    throw new MoltError(
      ErrorCode.OperatorUnreachable,
      `cannot reach the lab's operator at ${base}: ${connectFailure(e).text}`,
      { cause: e, retryable: true, hint },
    );
  }
  if (!res.ok)
    throw new MoltError(
      ErrorCode.OperatorUnreachable,
      `the lab's operator at ${base} answered ${path} with HTTP ${String(res.status)}`,
      { hint },
    );
  return (await res.json()) as T;
}

export async function labStatus(dir: string, io: LabIo, json: boolean): Promise<number> {
  const state = await requireLab(dir);
  const [machines, rollouts, vms] = await Promise.all([
    read<MachineRow[]>(state, '/v1/machines'),
    read<RolloutRow[]>(state, '/v1/rollouts'),
    vmRows(state.vms ?? []),
  ]);
  if (json) {
    io.out(`${JSON.stringify({ ...state, vms, fleet: machines, rollouts }, null, 2)}\n`);
    return 0;
  }
  io.out(statusText(state, machines, rollouts, vms));
  return 0;
}

function statusHeader(state: LabState): string {
  const net = state.network;
  return [
    `${bold('lab')} ${state.dir} (PID ${String(state.pid)}, since ${state.startedAt})`,
    `  dashboard  ${state.operator.dashboard}`,
    ...(signInLine(state) === undefined ? [] : [`             ${signInLine(state) ?? ''}`]),
    `  operator   ${state.operator.api}`,
    `  registry   ${state.registry}/${state.repository}`,
    ...(state.kubeconfig === undefined
      ? []
      : [
          `  kubeconfig ${state.kubeconfig}`,
          '  kubectl    molt lab kubectl get molt -n molt-system   (edit pool workers, apply -f …)',
        ]),
    ...(net?.mode === 'netns'
      ? [`  network    ${net.subnet ?? ''} on bridge ${net.bridge ?? ''}, a namespace per machine`]
      : []),
  ].join('\n');
}

function machineLine(m: MachineRow, endpoint: string): string {
  const o = m.observed;
  const phase = o?.reachable === false ? 'unreachable' : (o?.phase ?? '?');
  return `  ${m.id.padEnd(8)} ${m.role.padEnd(14)} ${m.pool.padEnd(16)} ${endpoint.padEnd(21)} ${(o?.version ?? '?').padEnd(8)} ${phase}`;
}

function statusText(
  state: LabState,
  machines: readonly MachineRow[],
  rollouts: readonly RolloutRow[],
  vms: readonly VmRow[],
): string {
  const endpoint = new Map(state.machines.map((m) => [m.id, new URL(m.endpoint).host]));
  return [
    statusHeader(state),
    '',
    '  MACHINE  ROLE           POOL             ENDPOINT              VERSION  PHASE',
    ...machines.map((m) => machineLine(m, endpoint.get(m.id) ?? '?')),
    ...vmLines(vms),
    ...rollouts.map(
      (r) =>
        `  rollout ${r.id}: ${r.state} ${String(r.counts.Succeeded)}/${String(r.counts.total)}`,
    ),
    '',
  ].join('\n');
}
