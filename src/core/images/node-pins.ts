// SPDX-License-Identifier: Apache-2.0
/**
 * Which images every Kubernetes node keeps pinned (docs/adr/0015 §7), and when a machine is told
 * again. Pure.
 *
 * - Each GM digest of each image policy in force, as `repository@digest`: kept for good.
 * - For each image rollout not yet ended, the digest each changed unit ran before (`from`), and
 *   the rollout's own `from` digest: kept while the rollout runs, so a rollback (a person's, or
 *   `onHalt`) needs no pull; the list drops it once the rollout ends (completed, cancelled, or
 *   superseded — by its rollback too). A rollout halted without a rollback keeps it: a person
 *   may still roll it back.
 * A reference without a digest (a workload that ran a bare tag) names nothing to keep.
 */
import { isEnded } from '../rollout/vocabulary.ts';
import type { Rollout } from '../rollout/types.ts';
import { parseImageReference } from '../slots/reference.ts';
import type { ImagePolicy } from './types.ts';

/** The list to send, sorted and without duplicates. */
export function nodePinList(
  policies: readonly Pick<ImagePolicy, 'repository' | 'gm'>[],
  rollouts: readonly Rollout[],
): string[] {
  const out = new Set<string>();
  for (const p of policies) for (const g of p.gm) out.add(`${p.repository}@${g.digest}`);
  for (const r of rollouts) for (const ref of keptWhileRunning(r)) out.add(ref);
  return [...out].sort();
}

/** The previous digests of an image rollout not yet ended. */
function keptWhileRunning(r: Rollout): string[] {
  if (r.images === undefined || isEnded(r.state)) return [];
  const changes = Object.values(r.images.units).flatMap((unit) => unit.changes);
  return [
    ...(r.from === undefined ? [] : [`${r.images.repository}@${r.from.digest}`]),
    ...changes.flatMap((change) => digestReference(change.from) ?? []),
  ];
}

/** `host/repo@sha256:…` of a reference that carries a digest; undefined otherwise. */
function digestReference(image: string): string | undefined {
  try {
    const ref = parseImageReference(image);
    return ref.digest === undefined ? undefined : `${ref.registry}/${ref.repository}@${ref.digest}`;
  } catch {
    return undefined;
  }
}

/** What a machine last acknowledged, or last answered. */
export type PinsSent =
  | { readonly kind: 'pinned'; readonly list: string; readonly at: number }
  /** `MOLT_NOT_KUBERNETES_NODE`: asked again only after `retryMs`. */
  | { readonly kind: 'not-a-node'; readonly at: number }
  /**
   * Any other failure (an agent rebooting, a registry away), the `tries`-th in a row: asked again
   * after `retryMs`, doubling per try up to `resendMs`, so a machine away for minutes is not asked
   * on every pass.
   */
  | { readonly kind: 'failed'; readonly at: number; readonly tries: number; readonly why: string };

export interface PinsTiming {
  /** A machine that acknowledged the list is told it again after this (a wiped EPHEMERAL). */
  readonly resendMs: number;
  /** A machine without a node runtime is asked again after this (it may be reinstalled as one). */
  readonly notNodeMs: number;
  /** A machine that failed is asked again after this, doubled per failure in a row. */
  readonly retryMs: number;
}

/** Whether `list` is due at this machine now. */
export function pinsDue(
  last: PinsSent | undefined,
  list: readonly string[],
  now: number,
  t: PinsTiming,
): boolean {
  if (last === undefined) return true;
  if (last.kind === 'failed')
    return now - last.at >= Math.min(t.retryMs * 2 ** Math.min(last.tries - 1, 20), t.resendMs);
  if (last.kind === 'not-a-node') return now - last.at >= t.notNodeMs;
  return last.list !== list.join('\n') || now - last.at >= t.resendMs;
}
