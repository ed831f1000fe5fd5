// SPDX-License-Identifier: Apache-2.0
/**
 * The discovery part of a reconcile pass (docs/adr/0005 §4): when a scan is due, read the
 * releases, pause rollouts whose release was withdrawn, create the rollouts discovery asks for,
 * and end the halted rollouts they supersede.
 */
import type { FleetSnapshot } from '../../core/rollout/types.ts';
import type { StoredState } from '../ports/store.ts';
import { recordTransition } from '../transitions/record.ts';
import { pauseRollout } from './act.ts';
import type { ReconcileDeps } from './deps.ts';
import { rolloutsToCreate, supersededBy, type Superseded } from '../decide/discovery.ts';
import { withdrawnRollouts } from '../decide/withdrawn.ts';

/** What discovery keeps between passes. */
export interface DiscoveryState {
  /** Epoch ms of the last discovery scan. */
  lastDiscovery: number | undefined;
  /** When this operator first saw each release digest (for pools' minimum release age). */
  readonly firstSeen: Map<string, number>;
}

/**
 * Ms until the next discovery scan is due: the loop wakes for it rather than rounding the scan
 * period up to whole passes (`discoverEvery` 5 s on a 2 s interval scanned every ~6.2 s). 0 when
 * no scan succeeded yet or the last one is overdue (it failed): the normal interval applies then.
 */
export function untilDiscovery(d: ReconcileDeps, state: DiscoveryState): number {
  if (state.lastDiscovery === undefined) return 0;
  return Math.max(0, state.lastDiscovery + d.settings.discoverEveryMs - d.now());
}

export async function discover(
  d: ReconcileDeps,
  snapshot: FleetSnapshot,
  state: DiscoveryState,
  stored: Pick<StoredState, 'rollouts' | 'blocks'>,
): Promise<void> {
  const now = d.now();
  const releases = await d.releases();
  state.lastDiscovery = now;
  for (const r of releases) if (!state.firstSeen.has(r.digest)) state.firstSeen.set(r.digest, now);
  for (const w of withdrawnRollouts({
    pools: d.settings.pools,
    releases,
    rollouts: snapshot.rollouts,
    blocks: stored.blocks,
  }))
    await pauseRollout(d, w.rollout, w.reason);
  const kubernetes = await d.kubernetesVersion?.();
  const created = rolloutsToCreate({
    ...(kubernetes !== undefined && { kubernetes }),
    pools: d.settings.pools,
    releases,
    // Every rollout ever made, ended ones included: one per (pool, release), never again.
    rollouts: stored.rollouts,
    blocks: stored.blocks,
    machines: snapshot.machines,
    now,
    firstSeen: state.firstSeen,
    ...(d.settings.requireSignature !== undefined && {
      requireSignature: d.settings.requireSignature,
    }),
  });
  for (const r of created) {
    const repair =
      r.repairOf === undefined
        ? ''
        : `, repairing drift: machines of ${r.repairOf} run another release again`;
    const message = `rollout ${r.id}: pool ${r.pool} to ${r.target.version} (${r.state})${repair}`;
    await recordTransition(d, {
      write: (store) => store.createRollout(r),
      record: {
        log: message,
        event: {
          at: now,
          kind: 'rollout-created',
          rollout: r.id,
          message,
          data: { target: r.target },
        },
      },
    });
  }
  for (const s of supersededBy(created, stored.rollouts)) await supersede(d, s);
}

/** End a halted rollout a newer one replaced (`Superseded`, with the reason). */
export async function supersede(d: ReconcileDeps, s: Superseded): Promise<void> {
  const message = `rollout ${s.rollout} superseded: ${s.reason}`;
  await recordTransition(d, {
    write: (store) =>
      store.updateRollout(s.rollout, (cur) =>
        cur.state === 'Halted' ? { ...cur, state: 'Superseded', endReason: s.reason } : cur,
      ),
    record: {
      log: message,
      event: {
        kind: 'rollout-state',
        rollout: s.rollout,
        message,
        data: { state: 'Superseded', reason: s.reason },
      },
    },
  });
}
