// SPDX-License-Identifier: Apache-2.0
/**
 * Cluster API's `UpdateMachine` as molt answers it (docs/adr/0014 decisions 3–5), pure: which
 * release carries the desired Kubernetes version for the machine's pool, the targeted rollout
 * that moves that one machine to it under the pool's policies (created once, keyed by machine and
 * version, so CAPI asking again every few seconds changes nothing), and what to answer from where
 * that rollout is: in progress (with where), done (the agent booted on the release), or failed
 * (the machine rolled back by itself, or nothing carries the version).
 */
import type { Release } from '../../core/releases/release.ts';
import type { Pool, Rollout } from '../../core/rollout/types.ts';
import type { MachineRecord, ReleaseBlock } from '../ports/store.ts';
import { blockedFor } from './discovery.ts';

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
  readonly now: number;
}

/** The id of the targeted rollout of `machine` to Kubernetes `version`. */
export const capiRolloutId = (machine: string, version: string): string =>
  `capi-${machine}-${version}`;

/** The newest release of the pool's channel, not blocked for it, that carries `version`. */
export function releaseCarrying(
  version: string,
  pool: Pool,
  releases: readonly Release[],
  blocks: readonly ReleaseBlock[],
): Release | undefined {
  const blocked = blockedFor(pool.name, blocks);
  return releases.find(
    (r) =>
      r.kubernetesVersion === version &&
      (pool.channel === undefined || r.channels.includes(pool.channel)) &&
      !blocked.has(r.digest),
  );
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

/** See the module comment. `create` is the targeted rollout to record before answering. */
export function capiUpdate(i: CapiUpdateInput): { answer: UpdateAnswer; create?: Rollout } {
  const m = i.machine;
  if (m === undefined) return failed('not a machine molt manages');
  if (i.pool === undefined) return failed(`${m.id}: its pool ${m.pool} is not configured`);
  const release = releaseCarrying(i.version, i.pool, i.releases, i.blocks);
  const id = capiRolloutId(m.id, i.version);
  const existing = i.rollouts.find((r) => r.id === id);
  if (existing !== undefined) return answerOf(existing, m.id, i);
  if (release === undefined)
    return failed(
      `no release${i.pool.channel === undefined ? '' : ` of channel ${i.pool.channel}`} carries Kubernetes ${i.version} (label dev.molt.kubernetes.version)`,
    );
  if (i.booted === release.digest)
    return { answer: { state: 'done', message: `already on ${release.version}` } };
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
    answer: { state: 'in-progress', message: `recorded rollout ${id} to ${release.version}` },
    create,
  };
}
