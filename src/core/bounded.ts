// SPDX-License-Identifier: Apache-2.0
/**
 * Memory a long-lived process keeps per key it was asked about (sessions, clients, Cluster API
 * Machines) must not grow with every key ever seen. In-house because the rule is three lines: the
 * oldest entries (a Map's or Set's insertion order) make room; no cache library is needed.
 */

/** What {@link makeRoom} needs of a Map or a Set. */
interface Keyed<K> {
  readonly size: number;
  keys(): IterableIterator<K>;
  delete(key: K): boolean;
}

/** Drop the oldest entries of `c` until one more fits under `max` (a bound under 1 counts as 1). */
export function makeRoom<K>(c: Keyed<K>, max: number): void {
  while (c.size >= Math.max(1, max)) {
    const oldest = c.keys().next();
    if (oldest.done === true) return;
    c.delete(oldest.value);
  }
}
