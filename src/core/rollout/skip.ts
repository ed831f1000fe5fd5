// SPDX-License-Identifier: Apache-2.0
/**
 * Which pending machines a rollout passes over for good (ADR 0005 §2): outside a targeted
 * rollout's machines, pinned to another version, already on the target, or ahead of it — a
 * rollout never downgrades — and, in a pool with `onHold: skip`, held while the hold lasts.
 */
import { heldUntil } from '../quoted-reasons.ts';
import { compareVersions } from '../releases/order.ts';
import { parseTag } from '../releases/tag.ts';
import { instant } from '../time.ts';
import type { Machine, Pool, Rollout } from './types.ts';

/** Why a machine is skipped or waits. */
export interface Reason {
  readonly code: string;
  readonly message: string;
}

/**
 * Whether a machine version is newer than a target version, computed once per pair: a plan looks
 * at every machine (100,000 in P2) and a fleet runs a few versions. Unreadable versions: false.
 */
const aheadCache = new Map<string, Map<string, boolean>>();
/** The pair asked last, answered without the maps: most machines of a rollout run one version. */
let last = { version: '', target: '', ahead: false };

function newerThan(version: string, target: string): boolean {
  if (version !== last.version || target !== last.target) {
    last = { version, target, ahead: lookUpNewer(version, target) };
  }
  return last.ahead;
}

function lookUpNewer(version: string, target: string): boolean {
  let byVersion = aheadCache.get(target);
  if (byVersion === undefined) {
    if (aheadCache.size >= 1_000) aheadCache.clear();
    byVersion = new Map();
    aheadCache.set(target, byVersion);
  }
  let ahead = byVersion.get(version);
  if (ahead === undefined) {
    const mine = parseTag(version);
    const theirs = parseTag(target);
    ahead = mine.ok && theirs.ok && compareVersions(mine.version, theirs.version) > 0;
    if (byVersion.size >= 10_000) byVersion.clear();
    byVersion.set(version, ahead);
  }
  return ahead;
}

const aheadOf = (m: Machine, r: Rollout): boolean =>
  m.version !== undefined && newerThan(m.version, r.target.version);

/**
 * `NotTargeted` by a targeted rollout (`only`: a Cluster API update of one machine, ADR 0014),
 * `Pinned` to another version, `AlreadyOnTarget` digest, or `AheadOfTarget`: a rollout never
 * downgrades a machine (a step of a multi-hop path, a machine upgraded by hand); only a fleet
 * rollback goes back on purpose. Only for Pending machines.
 */
export function skipOf(m: Machine, r: Rollout): Reason | undefined {
  if (r.only !== undefined && !r.only.includes(m.id)) {
    return { code: 'NotTargeted', message: `rollout ${r.id} moves only ${r.only.join(', ')}` };
  }
  if (m.pin !== undefined && m.pin.version !== r.target.version) {
    return { code: 'Pinned', message: `pinned to ${m.pin.version}: ${m.pin.reason}` };
  }
  if (m.digest === r.target.digest) {
    return { code: 'AlreadyOnTarget', message: `already on ${r.target.version}` };
  }
  if (r.rollbackOf === undefined && aheadOf(m, r)) {
    return {
      code: 'AheadOfTarget',
      message: `runs ${String(m.version)}, newer than ${r.target.version}: a rollout never downgrades`,
    };
  }
  return undefined;
}

/** What {@link passedOver} needs besides the machine: the pool's `onHold`, and now (epoch ms). */
export interface HoldRule {
  readonly onHold: Pool['onHold'];
  readonly now: number;
}

/**
 * {@link skipOf}, and a machine held in a pool with `onHold: skip`: the rollout finishes without
 * it (`Held`, with the hold's reason), and once the hold ends the machine is no longer passed
 * over — the rollout takes it if it is still running, else discovery's drift repair does.
 */
export function passedOver(m: Machine, r: Rollout, rule: HoldRule): Reason | undefined {
  const skip = skipOf(m, r);
  if (skip !== undefined || rule.onHold !== 'skip') return skip;
  if (m.hold === undefined || m.hold.until <= rule.now) return undefined;
  const held = heldUntil(instant(m.hold.until), m.hold.reason);
  return {
    code: 'Held',
    message: `${held}; the pool finishes without it (onHold: skip) and catches it up when the hold ends`,
  };
}
