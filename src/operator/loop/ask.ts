// SPDX-License-Identifier: Apache-2.0
/** The request that starts one machine of a rollout, as its agent is asked for it. */
import { ErrorCode, isMoltError } from '../../core/errors.ts';
import { acceptsQuorumLoss } from '../../core/rollout/small-control-plane.ts';
import type { Rollout } from '../../core/rollout/types.ts';
import type { MachineRecord } from '../ports/store.ts';
import type { ReconcileDeps } from './deps.ts';

/**
 * A fleet rollback switches a machine back to its other slot when that slot still holds the
 * target (seconds, nothing to pull); a machine the rollout staged ahead applies what it staged
 * (only a reboot is left: docs/adr/0019 §2) unless the agent no longer holds it; otherwise, and
 * for every forward rollout, the agent upgrades to the target image by digest.
 */
export async function ask(
  d: ReconcileDeps,
  rollout: Rollout,
  machine: MachineRecord,
  image: string,
): Promise<{ operationId: string }> {
  if (rollout.rollbackOf !== undefined) {
    const status = await d.agents.status(machine);
    const other = status.slots.find((s) => s.slot !== status.bootedSlot);
    if (other?.status === 'ready' && other.digest === rollout.target.digest)
      return d.agents.rollback(machine);
  }
  const acceptQuorumLoss = await smallClusterAccepted(d, machine);
  const applied = await applyStaged(d, rollout, machine, acceptQuorumLoss);
  if (applied !== undefined) return applied;
  const drain = d.settings.pools.find((p) => p.name === rollout.pool)?.drain;
  return d.agents.upgrade(machine, {
    image,
    ...(drain !== undefined && { drain }),
    ...(acceptQuorumLoss && { acceptQuorumLoss }),
  });
}

/** Apply what `rollout` staged on `machine`; undefined when it staged nothing or that is gone. */
async function applyStaged(
  d: ReconcileDeps,
  rollout: Rollout,
  machine: MachineRecord,
  acceptQuorumLoss: boolean,
): Promise<{ operationId: string } | undefined> {
  const staged = rollout.staged?.[machine.id];
  if (staged === undefined) return undefined;
  try {
    return await d.agents.apply(machine, {
      operationId: staged.operationId,
      ...(acceptQuorumLoss && { acceptQuorumLoss }),
    });
  } catch (e) {
    if (!isMoltError(e, ErrorCode.NotStaged)) throw e;
    d.log(`${machine.id}: its staged ${rollout.target.version} is gone; upgrading instead`);
    return undefined;
  }
}

/**
 * A control-plane machine of a 1- or 2-machine cluster whose settings accept the downtime: its
 * agent is told the loss of etcd quorum is accepted (the planner only starts it then). Read from
 * the store's machines, since a resubmission has no plan at hand; control-plane starts are rare.
 */
async function smallClusterAccepted(d: ReconcileDeps, machine: MachineRecord): Promise<boolean> {
  if (machine.role !== 'control-plane' || d.settings.clusters === undefined) return false;
  const { machines } = await d.store.read();
  return acceptsQuorumLoss({ machines, clusters: d.settings.clusters }, machine);
}
