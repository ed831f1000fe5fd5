// SPDX-License-Identifier: Apache-2.0
/**
 * What the operator's state looks like as molt.dev custom resources (deploy/kubernetes/crds.yaml,
 * docs/adr/0006 §9): one Rollout per rollout, one Channel per followed channel, one NodeUpgrade per
 * machine. Pure: the mirror (`mirror.ts`) writes what this returns and nothing else, so what
 * `kubectl get molt` shows is decided here and tested without a cluster.
 */
import { createHash } from 'node:crypto';
import type { MachinePhase, Pool, Rollout } from '../../../core/rollout/types.ts';
import type { MachineRecord, StoredState } from '../../ports/store.ts';
import { iso } from '../../../core/time.ts';
import { booted, type Observation } from '../../decide/observation.ts';

export type MirrorKind = 'Rollout' | 'Channel' | 'NodeUpgrade';

export interface Condition {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
  readonly lastTransitionTime?: string;
}

export interface MirrorObject {
  readonly kind: MirrorKind;
  readonly name: string;
  readonly spec: Readonly<Record<string, unknown>>;
  readonly status: Readonly<Record<string, unknown>> & {
    readonly conditions: readonly Condition[];
  };
}

export interface ViewInput {
  readonly state: StoredState;
  readonly pools: readonly Pool[];
  readonly observed: (machine: string) => Observation | undefined;
}

/**
 * A DNS-1123 subdomain for `id`: lowercased, anything else replaced by `-`; when that changed the
 * id, a hash of the original keeps two ids from landing on one object.
 */
export function kubeName(id: string): string {
  const lower = id.toLowerCase();
  const clean = lower
    .replace(/[^a-z0-9.-]+/g, '-')
    .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '')
    .slice(0, 200);
  if (clean === id && clean !== '') return clean;
  const hash = createHash('sha256').update(id).digest('hex').slice(0, 8);
  return clean === '' ? `x-${hash}` : `${clean}-${hash}`;
}

const condition = (type: string, yes: boolean, reason: string, message: string): Condition => ({
  type,
  status: yes ? 'True' : 'False',
  reason,
  message,
});

function poolMachines(state: StoredState, pool: string): string[] {
  return state.machines.filter((m) => m.pool === pool).map((m) => m.id);
}

function counts(r: Rollout, members: readonly string[]) {
  const all = [...new Set([...members, ...Object.keys(r.machines)])].sort();
  const phaseOf = (id: string): MachinePhase => r.machines[id]?.phase ?? 'Pending';
  const n = (phase: MachinePhase): number => all.filter((id) => phaseOf(id) === phase).length;
  return {
    all,
    phaseOf,
    total: all.length,
    succeeded: n('Succeeded'),
    inFlight: n('InFlight'),
    // The release failed on a rolled-back machine too: FAILED counts both, as `molt rollout list`
    // does; `rolledBack` says how many of them went back by themselves.
    failed: n('Failed') + n('RolledBack'),
    rolledBack: n('RolledBack'),
    skipped: n('Skipped'),
    pending: n('Pending'),
  };
}

function rolloutConditions(r: Rollout, c: ReturnType<typeof counts>): Condition[] {
  const failure = c.all
    .map((id) => ({ id, p: r.machines[id] }))
    .find(({ p }) => p?.phase === 'Failed' || p?.phase === 'RolledBack');
  const why =
    failure === undefined
      ? ''
      : `: ${failure.id} ${failure.p?.phase ?? ''}${failure.p?.reason === undefined ? '' : ` (${failure.p.reason})`}`;
  const what = r.images === undefined ? 'machines' : 'workloads';
  const progress = `${String(c.succeeded)} of ${String(c.total)} ${what} on ${r.target.version}`;
  return [
    condition('Progressing', r.state === 'Active', r.state, `${progress}${why}`),
    condition('Complete', r.state === 'Completed', r.state, progress),
    condition('Halted', r.state === 'Halted', r.state, r.state === 'Halted' ? `halted${why}` : ''),
  ];
}

function rolloutObject(r: Rollout, state: StoredState): MirrorObject {
  const c = counts(r, poolMachines(state, r.pool));
  return {
    kind: 'Rollout',
    name: kubeName(r.id),
    spec: {
      pool: r.pool,
      target: r.target,
      ...(r.from !== undefined && { from: r.from }),
      ...(r.rollbackOf !== undefined && { rollbackOf: r.rollbackOf }),
    },
    status: {
      phase: r.state,
      progress: `${String(c.succeeded)}/${String(c.total)}`,
      total: c.total,
      succeeded: c.succeeded,
      inFlight: c.inFlight,
      failed: c.failed,
      rolledBack: c.rolledBack,
      skipped: c.skipped,
      pending: c.pending,
      machines: c.all.map((id) => {
        const p = r.machines[id];
        return {
          name: id,
          phase: c.phaseOf(id),
          ...(p?.reason !== undefined && { reason: p.reason }),
          ...(p?.startedAt !== undefined && { startedAt: iso(p.startedAt) }),
          ...(p?.finishedAt !== undefined && { finishedAt: iso(p.finishedAt) }),
        };
      }),
      conditions: rolloutConditions(r, c),
    },
  };
}

/** Newest first. */
const newest = (rollouts: readonly Rollout[]): Rollout[] =>
  [...rollouts].sort((a, b) => b.createdAt - a.createdAt || b.id.localeCompare(a.id));

function channelObjects(state: StoredState, pools: readonly Pool[]): MirrorObject[] {
  const byChannel = new Map<string, string[]>();
  for (const p of pools)
    if (p.channel !== undefined)
      byChannel.set(p.channel, [...(byChannel.get(p.channel) ?? []), p.name]);
  return [...byChannel].map(([channel, names]) => {
    const latest = newest(state.rollouts).find(
      (r) => names.includes(r.pool) && r.rollbackOf === undefined,
    );
    return {
      kind: 'Channel',
      name: kubeName(channel),
      spec: { channel },
      status: {
        ...(latest !== undefined && { latest: latest.target }),
        pools: names,
        poolList: names.join(','),
        conditions: [
          condition(
            'Discovered',
            latest !== undefined,
            latest === undefined ? 'NoRelease' : 'Release',
            latest === undefined
              ? 'no release seen yet'
              : `newest release ${latest.target.version}`,
          ),
        ],
      },
    };
  });
}

/** The rollout that concerns `m` now: one moving it, else its pool's newest. */
function currentRollout(m: MachineRecord, rollouts: readonly Rollout[]): Rollout | undefined {
  const ofPool = newest(rollouts).filter((r) => r.pool === m.pool);
  return ofPool.find((r) => r.machines[m.id]?.phase === 'InFlight') ?? ofPool[0];
}

const nodePhases: Record<MachinePhase, string> = {
  Pending: 'Pending',
  InFlight: 'Upgrading',
  Succeeded: 'Upgraded',
  Failed: 'Failed',
  RolledBack: 'RolledBack',
  Skipped: 'Quarantined',
};

/** Upgraded by `r` once, but booted on something else now (a hand rollback, a re-image). */
const drifted = (r: Rollout, m: MachineRecord, digest: string | undefined): boolean =>
  r.machines[m.id]?.phase === 'Succeeded' && digest !== undefined && digest !== r.target.digest;

function nodePhase(r: Rollout | undefined, m: MachineRecord, digest: string | undefined): string {
  if (r === undefined) return 'Idle';
  if (drifted(r, m, digest)) return 'Drifted';
  const phase = r.machines[m.id]?.phase ?? 'Pending';
  if (phase === 'Pending' && digest === r.target.digest) return 'UpToDate';
  if (phase === 'Pending' && r.state !== 'Active')
    return r.state === 'Completed' ? 'Idle' : 'Waiting';
  return nodePhases[phase];
}

function reachable(seen: Observation | undefined): Condition {
  if (seen === undefined) return condition('Reachable', false, 'NotObserved', 'not asked yet');
  if (seen.status === undefined)
    return condition('Reachable', false, 'Unreachable', seen.error ?? 'no answer');
  return condition('Reachable', true, 'Answered', 'the agent answered');
}

function upToDate(r: Rollout | undefined, m: MachineRecord, digest: string | undefined): Condition {
  if (r === undefined)
    return condition('UpToDate', false, 'NoRelease', 'no release for its pool yet');
  if (drifted(r, m, digest))
    return condition(
      'UpToDate',
      false,
      'Drifted',
      `upgraded to ${r.target.version} by ${r.id}, runs another release now; a repair rollout brings it back unless it is held or pinned`,
    );
  const yes = digest === r.target.digest;
  return condition('UpToDate', yes, yes ? 'OnTarget' : 'NotOnTarget', `target ${r.target.version}`);
}

function observedFields(seen: Observation | undefined): Record<string, string> {
  if (seen === undefined) return {};
  const at = { observedAt: iso(seen.at) };
  return seen.status === undefined ? at : { ...at, agentPhase: seen.status.phase };
}

function nodeSpec(m: MachineRecord): Record<string, unknown> {
  return {
    machine: m.id,
    pool: m.pool,
    role: m.role,
    endpoint: m.endpoint,
    ...(m.cluster !== undefined && { cluster: m.cluster }),
  };
}

function nodeObject(m: MachineRecord, input: ViewInput): MirrorObject {
  const seen = input.observed(m.id);
  const now = seen?.status === undefined ? undefined : booted(seen.status);
  const r = currentRollout(m, input.state.rollouts);
  const reason = r?.machines[m.id]?.reason;
  return {
    kind: 'NodeUpgrade',
    name: kubeName(m.id),
    spec: nodeSpec(m),
    status: {
      phase: nodePhase(r, m, now?.digest),
      ...(now !== undefined && { booted: now }),
      ...(r !== undefined && { target: r.target, rollout: kubeName(r.id) }),
      ...observedFields(seen),
      ...(reason !== undefined && { reason }),
      conditions: [reachable(seen), upToDate(r, m, now?.digest)],
    },
  };
}

export function mirrorObjects(input: ViewInput): MirrorObject[] {
  return [
    ...input.state.rollouts.map((r) => rolloutObject(r, input.state)),
    ...channelObjects(input.state, input.pools),
    ...input.state.machines.map((m) => nodeObject(m, input)),
  ];
}

/**
 * Conditions carry the time they last changed status: keep `previous`'s time for a condition whose
 * status did not change, stamp `now` on one that did (or is new).
 */
export function stampTransitions(
  next: readonly Condition[],
  previous: readonly Condition[],
  now: string,
): Condition[] {
  return next.map((c) => {
    const before = previous.find((p) => p.type === c.type);
    return {
      ...c,
      lastTransitionTime: before?.status === c.status ? (before.lastTransitionTime ?? now) : now,
    };
  });
}
