// SPDX-License-Identifier: Apache-2.0

/**
 * `fn` over every item with at most `limit` calls in flight; results in input order. The first
 * rejection rejects the whole call, and no new items start after it (items already in flight
 * finish on their own), so a registry outage stops a 2,000-tag scan after a handful of requests
 * instead of queueing 2,000 failures.
 */
export async function mapConcurrent<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        results[i] = await fn(items[i] as T, i);
      } catch (e) {
        failed = true;
        throw e;
      }
    }
  };
  const workers = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker);
  await Promise.all(workers);
  return results;
}
