// SPDX-License-Identifier: Apache-2.0
/**
 * Cluster API's `UpdateMachine` as molt answers it (docs/adr/0014 decisions 3–5), pure: which
 * release carries the desired Kubernetes version and may go to the machine — discovery's
 * eligibility (`eligibility.ts`) as one step from the release the machine runs — the targeted
 * rollout that moves that one machine to it under the pool's policies (created once, keyed by
 * machine and version, so CAPI asking again every few seconds changes nothing), and what to answer
 * from where that rollout is: in progress (with where), done (the agent booted on the release), or
 * failed (the machine rolled back by itself, or no eligible release carries the version).
 */
import type { Release } from '../../core/releases/release.ts';
import type { Pool, Rollout } from '../../core/rollout/types.ts';
import type { MachineRecord, ReleaseBlock } from '../ports/store.ts';
import { oldestRunning, releaseVerdict, type Running } from './eligibility.ts';

export type UpdateState = 'in-progress' | 'done' | 'failed';

export interface UpdateAnswer {
  readonly state: UpdateState;
  readonly message: string;
  /** The machine itself failed the release (see InPlaceUpdateState). */
  readonly machineFailed?: boolean;
}

export interface CapiUpdateInput {
  /** The molt machine the CAPI Machine maps to (undefined: none). */
  readonly machine: MachineRecord | undefined;
  /** The desired Machine's `spec.version` (`vX.Y.Z`). */
  readonly version: string;
  readonly pool: Pool | undefined;
  /** Discovered releases, newest first. */
  readonly releases: readonly Release[];
  readonly rollouts: readonly Rollout[];
  readonly blocks: readonly ReleaseBlock[];
  /** The digest the machine's agent last reported booted (undefined: not observed). */
  readonly booted: string | undefined;
  /** The version its agent reported: what it runs when the digest is no listed release's. */
  readonly bootedVersion?: string | undefined;
  /** The operator requires verified signatures (it has a public key). */
  readonly requireSignature?: boolean | undefined;
  readonly now: number;
}

/** The id of the targeted rollout of `machine` to Kubernetes `version`. */
export const capiRolloutId = (machine: string, version: string): string =>
  `capi-${machine}-${version}`;

/** What a release for a Cluster API update is checked against besides its pool. */
export interface CarryRules {
  readonly blocks: readonly ReleaseBlock[];
  readonly requireSignature?: boolean | undefined;
  /** What the machines it would move run: one Machine's, or a MachineSet's pool's. */
  readonly from: readonly Running[];
}

/** The release chosen, or why none is (nothing is recorded then). */
export type Carrying = { readonly release: Release } | { readonly refused: string };

/** At most this many refused releases are named in an answer (CAPI shows it in a condition). */
const NAMED = 3;

/**
 * The release the machines already run when each runs one carrying `version`: there is nothing to
 * move, so the in-place answer is yes (a Machine already on the version must not be replaced, and
 * "not newer than the current release" would refuse it).
 */
function alreadyCarrying(
  version: string,
  releases: readonly Release[],
  from: readonly Running[],
): Release | undefined {
  const on = from.map((m) => releases.find((r) => r.digest === m.digest));
  return on.length > 0 && on.every((r) => r?.kubernetesVersion === version) ? on[0] : undefined;
}

/**
 * The newest release carrying Kubernetes `version` that discovery's eligibility admits for `pool`
 * in one step from the oldest release `rules.from` run: not blocked, in the pool's channel (a pool
 * with none: in some channel), official, signed when required, newer than that release and
 * admitted by its `upgrade-from` range; its Kubernetes range, when it declares one, must admit the
 * version it carries. Refused when no machine's release is known (as discovery moves no machine it
 * has not seen), naming why each newest carrying release was not taken.
 */
export function releaseCarrying(
  version: string,
  pool: Pool,
  releases: readonly Release[],
  rules: CarryRules,
): Carrying {
  const carrying = releases.filter((r) => r.kubernetesVersion === version);
  if (carrying.length === 0)
    return {
      refused: `no release carries Kubernetes ${version} (label dev.molt.kubernetes.version)`,
    };
  const here = alreadyCarrying(version, releases, rules.from);
  if (here !== undefined) return { release: here };
  const current = oldestRunning(rules.from, releases);
  if (current === undefined)
    return { refused: 'the release it runs is not known yet (its agent has not answered)' };
  const against = { ...rules, pool, current: current.tag, kubernetes: version };
  const why: string[] = [];
  for (const r of carrying) {
    const refusal = releaseVerdict(r, against);
    if (refusal === undefined) return { release: r };
    why.push(`${r.version} ${refusal.reason}`);
  }
  const more = why.length > NAMED ? `; ${String(why.length - NAMED)} more` : '';
  return {
    refused: `no release that carries Kubernetes ${version} may go to a machine on ${current.tag}${pool.channel === undefined ? '' : ` in channel ${pool.channel}`}: ${why.slice(0, NAMED).join('; ')}${more}`,
  };
}

const failed = (message: string, machineFailed = false): { answer: UpdateAnswer } => ({
  answer: { state: 'failed', message, ...(machineFailed && { machineFailed }) },
});
const progress = (message: string): { answer: UpdateAnswer } => ({
  answer: { state: 'in-progress', message },
});

/** A machine not started yet: the rollout's state says whether it will be. */
function notStarted(r: Rollout): { answer: UpdateAnswer } {
  if (r.state === 'Active')
    return progress(`waiting for the pool's policies to start it (rollout ${r.id})`);
  if (r.state === 'Paused' || r.state === 'AwaitingApproval')
    return progress(`rollout ${r.id} is ${r.state}`);
  return failed(
    `rollout ${r.id} is ${r.state}${r.endReason === undefined ? '' : ` (${r.endReason})`}`,
  );
}

/** What one machine's phase in its targeted rollout answers. */
function answerOf(r: Rollout, id: string, i: CapiUpdateInput): { answer: UpdateAnswer } {
  const p = r.machines[id];
  const why = p?.reason === undefined ? '' : `: ${p.reason}`;
  switch (p?.phase) {
    case undefined:
    case 'Pending':
      return notStarted(r);
    case 'InFlight':
      return progress(`upgrading to ${r.target.version} (rollout ${r.id})`);
    case 'Succeeded':
      return i.booted === r.target.digest
        ? { answer: { state: 'done', message: `booted on ${r.target.version}` } }
        : progress(`upgraded; waiting for the agent to report ${r.target.version}`);
    case 'RolledBack':
      return failed(`${id} failed on ${r.target.version} and rolled back by itself${why}`, true);
    case 'Failed':
      return failed(`${id} Failed on ${r.target.version}${why}`, true);
    case 'Skipped':
      return failed(`${id} Skipped on ${r.target.version}${why}`);
  }
}

/** A machine with no targeted rollout yet: record one to the release chosen, or say why not. */
function toRecord(i: CapiUpdateInput, m: MachineRecord, pool: Pool) {
  const on = i.releases.find((r) => r.digest === i.booted);
  // Already there: CAPI's question is answered, whatever became of that release since.
  if (on?.kubernetesVersion === i.version)
    return { answer: { state: 'done' as const, message: `already on ${on.version}` } };
  const found = releaseCarrying(i.version, pool, i.releases, {
    blocks: i.blocks,
    requireSignature: i.requireSignature,
    from: [{ digest: i.booted, version: i.bootedVersion }],
  });
  if ('refused' in found) return failed(`${m.id}: ${found.refused}`);
  const id = capiRolloutId(m.id, i.version);
  const { release } = found;
  const create: Rollout = {
    id,
    pool: m.pool,
    target: { version: release.version, digest: release.digest },
    state: 'Active',
    createdAt: i.now,
    machines: {},
    only: [m.id],
  };
  return {
    answer: {
      state: 'in-progress' as const,
      message: `recorded rollout ${id} to ${release.version}`,
    },
    create,
  };
}

/** See the module comment. `create` is the targeted rollout to record before answering. */
export function capiUpdate(i: CapiUpdateInput): { answer: UpdateAnswer; create?: Rollout } {
  const m = i.machine;
  if (m === undefined) return failed('not a machine molt manages');
  if (i.pool === undefined) return failed(`${m.id}: its pool ${m.pool} is not configured`);
  const existing = i.rollouts.find((r) => r.id === capiRolloutId(m.id, i.version));
  if (existing !== undefined) return answerOf(existing, m.id, i);
  return toRecord(i, m, i.pool);
}
