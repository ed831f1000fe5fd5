// SPDX-License-Identifier: Apache-2.0
/**
 * How molt serves each FleetLock group (one per pool): its slots and maintenance windows, from the
 * pool's policies, and how long a slot lasts without its holder renewing it (`fleetLock.ttl` and
 * `fleetLock.groups.<pool>.ttl` of the operator config).
 */
import { isAllowed, limitOf, type Policy } from '../../core/rollout/index.ts';

/**
 * How long a FleetLock slot lasts when its holder does not renew it (pre-reboot again), when the
 * config names no TTL: one hour. Zincati holds its slot from pre-reboot across finalize, reboot
 * and boot until steady-state, and re-tries a failing steady-state every 5 minutes — the TTL must
 * outlast that, or a second node reboots while the first is still coming up. Past it, a node that
 * never came back stops holding its group: at most one node per TTL of a broken release reboots.
 */
export const DEFAULT_FLEETLOCK_TTL_MS = 60 * 60_000;

/** How molt serves one group. */
export interface FleetLockGroup {
  /** Concurrent reboots allowed (0 freezes the group). Lowering it never evicts a holder. */
  readonly slots: number;
  /** Whether a new slot may be granted at `now` (epoch ms); always, when absent. */
  readonly windowOpen?: (now: number) => boolean;
  /** How long a slot lasts without renewal, in ms. @default {@link DEFAULT_FLEETLOCK_TTL_MS} */
  readonly ttlMs?: number;
}

/** Maintenance windows and the tightest concurrency limit of a pool's policies, as a group. */
export function fleetLockGroup(
  policies: readonly Policy[],
  scopeSize: number,
  ttlMs?: number,
): FleetLockGroup {
  const limits = policies.flatMap((p) => (p.kind === 'concurrency' ? [limitOf(p, scopeSize)] : []));
  const windows = policies.flatMap((p) => (p.kind === 'window' ? [p] : []));
  return {
    // No concurrency policy: one reboot at a time, airlock's default.
    slots: limits.length === 0 ? 1 : Math.min(...limits),
    ...(windows.length > 0 && { windowOpen: (now) => windows.every((w) => isAllowed(w, now)) }),
    ...(ttlMs !== undefined && { ttlMs }),
  };
}
