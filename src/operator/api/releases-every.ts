// SPDX-License-Identifier: Apache-2.0
/**
 * The registry's releases for the read views (the plan's "where each pool goes next", the
 * dashboard's pools page): each asks discovery, which lists every tag of the repository, and pages
 * refresh every 2 s while `molt plan` is typed in a loop. Those views use an answer while it is
 * under a few seconds old; the actions (`releases block`) still ask discovery each time.
 */
import type { Release } from '../../core/releases/release.ts';
import type { OperatorApiDeps } from './context.ts';

/** How long a read view uses the registry's releases before it asks again. */
export const ReleasesMaxAgeMs = 10_000;

/** `deps` whose `releases` answers from its last answer while that is under `ms` old. */
export function withReleasesEvery(deps: OperatorApiDeps, ms = ReleasesMaxAgeMs): OperatorApiDeps {
  const read = deps.releases;
  if (read === undefined) return deps;
  let last: { at: number; answer: Promise<readonly Release[]> } | undefined;
  const releases = (): Promise<readonly Release[]> => {
    const now = deps.now();
    if (last === undefined || now - last.at >= ms) {
      const answer = read();
      // A failed read is not kept: the next view asks again.
      answer.catch(() => {
        if (last?.answer === answer) last = undefined;
      });
      last = { at: now, answer };
    }
    return last.answer;
  };
  return { ...deps, releases };
}
