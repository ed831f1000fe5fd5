// SPDX-License-Identifier: Apache-2.0
/** A time bound on a promise that may never settle (an etcd3 call held by a breaker or a stream). */

/**
 * `work`'s outcome, or `late()`'s error once `ms` have passed; a value `work` gives after that is
 * handed to `discard` (a stream to end).
 */
export async function settleWithin<T>(
  work: Promise<T>,
  ms: number,
  late: () => Error,
  discard: (value: T) => void = (v) => (v as { end?: () => void }).end?.(),
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      reject(late());
    }, ms);
  });
  void work.then(
    (v) => {
      if (timedOut) discard(v);
    },
    () => undefined,
  );
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}
