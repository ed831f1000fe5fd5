// SPDX-License-Identifier: Apache-2.0
/**
 * What the read views cost in I/O, answered from an answer a few seconds old: the registry's
 * releases and the cluster's Kubernetes version (the plan's "where each pool goes next", the
 * dashboard's pools page), and for `GET /v1/images` the cluster's workloads and each followed
 * repository's tags. Pages refresh every 2 s and `molt plan` is typed in a loop; without this,
 * every reader with a viewer's certificate would make the operator list the whole repository and
 * the cluster again — a read the fleet's readers could multiply at will. The actions
 * (`releases block`) and the image driver still ask each time.
 */
import type { ImagesDeps } from '../images/observe.ts';
import type { OperatorApiDeps } from './context.ts';

/** How long a read view uses the registry's releases before it asks again. */
export const ReleasesMaxAgeMs = 10_000;

/** `read`, answering from its last answer while that is under `ms` old by `now`. */
export function memo<T>(read: () => Promise<T>, ms: number, now: () => number): () => Promise<T> {
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

/** `images` whose workload listing and repository scans answer from answers under `ms` old. */
export function withImagesEvery(images: ImagesDeps, ms = ReleasesMaxAgeMs): ImagesDeps {
  const { workloads, now } = images;
  const list = memo(() => workloads.list(), ms, now);
  const platforms = memo(() => workloads.platforms(), ms, now);
  const scans = new Map<string, () => ReturnType<ImagesDeps['scan']>>();
  return {
    ...images,
    workloads: {
      list,
      platforms,
      setImages: (ref, changes) => workloads.setImages(ref, changes),
      progress: (ref) => workloads.progress(ref),
    },
    scan: (repository) => {
      let scan = scans.get(repository);
      if (scan === undefined) {
        scan = memo(() => images.scan(repository), ms, now);
        scans.set(repository, scan);
      }
      return scan();
    },
  };
}
