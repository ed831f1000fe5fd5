// SPDX-License-Identifier: Apache-2.0
/**
 * The rollback of an image rollout (docs/adr/0013 decisions 4, 9): a new image rollout, `rollbackOf`
 * the original, whose units are exactly the ones the original changed (in flight, succeeded or
 * failed) with each change reversed — `to → from`, written under the same `test` ops, so a
 * workload someone edited since is not overwritten. Units the original never touched are not in it.
 */
import { parseImageReference } from '../slots/reference.ts';
import type { Rollout } from '../rollout/types.ts';
import type { ImageRolloutRecord } from './workload.ts';

const changed = new Set(['InFlight', 'Succeeded', 'Failed']);

/** The tag and digest of an image reference, for the rollback's target. */
function release(image: string): { version: string; digest: string } | undefined {
  try {
    const ref = parseImageReference(image);
    return ref.digest === undefined ? undefined : { version: ref.tag ?? '', digest: ref.digest };
  } catch {
    return undefined;
  }
}

/** See the module comment. `original.images` must be set (the caller checks). */
export function imageRollbackOf(
  original: Rollout & { readonly images: ImageRolloutRecord },
  now: number,
): Rollout {
  const units = Object.fromEntries(
    Object.entries(original.images.units)
      .filter(([id]) => changed.has(original.machines[id]?.phase ?? 'Pending'))
      .map(([id, u]) => [
        id,
        { changes: u.changes.map((c) => ({ container: c.container, from: c.to, to: c.from })) },
      ]),
  );
  const first = Object.values(units)[0]?.changes[0];
  const target = original.from ?? (first === undefined ? undefined : release(first.to));
  return {
    id: `${original.id}-rollback`,
    pool: original.pool,
    target: target ?? original.target,
    state: 'Active',
    createdAt: now,
    machines: {},
    from: original.target,
    rollbackOf: original.id,
    images: { ...original.images, units },
  };
}
