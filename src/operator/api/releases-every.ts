// SPDX-License-Identifier: Apache-2.0
/**
 * The registry's releases and the cluster's Kubernetes version for the read views (the plan's
 * "where each pool goes next", the dashboard's pools page): the first lists every tag of the
 * repository, the second asks the API server, and pages refresh every 2 s while `molt plan` is
 * typed in a loop. Those views use an answer while it is under a few seconds old; the actions
 * (`releases block`) still ask each time.
 */
import type { OperatorApiDeps } from './context.ts';

/** How long a read view uses the registry's releases before it asks again. */
export const ReleasesMaxAgeMs = 10_000;

/** `read`, answering from its last answer while that is under `ms` old by `now`. */
function memo<T>(read: () => Promise<T>, ms: number, now: () => number): () => Promise<T> {
  let last: { at: number; answer: Promise<T> } | undefined;
  return () => {
    const at = now();
    if (last === undefined || at - last.at >= ms) {
      const answer = read();
      // A failed read is not kept: the next view asks again.
      answer.catch(() => {
        if (last?.answer === answer) last = undefined;
      });
      last = { at, answer };
    }
    return last.answer;
  };
}

/** `deps` whose `releases` and `kubernetesVersion` answer from answers under `ms` old. */
export function withReleasesEvery(deps: OperatorApiDeps, ms = ReleasesMaxAgeMs): OperatorApiDeps {
  const { releases, kubernetesVersion } = deps;
  return {
    ...deps,
    ...(releases !== undefined && { releases: memo(releases, ms, deps.now) }),
    ...(kubernetesVersion !== undefined && {
      kubernetesVersion: memo(kubernetesVersion, ms, deps.now),
    }),
  };
}
