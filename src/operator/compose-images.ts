// SPDX-License-Identifier: Apache-2.0
/**
 * The operator's image policies, composed (docs/adr/0013): the policies in force, live — the fleet
 * file's at start, then what each pass of the declared runner sets (the file's and the accepted
 * molt.dev `ImagePolicy` objects) — and what observing them needs: the cluster's workloads (only
 * when the config reads a cluster: `kubernetes`), one image scanner for the operator, and a
 * registry client per host, opened for one scan and closed after it. A host is spoken to over
 * plain HTTP only when it is the operator's own registry and the config says `insecure`, or when
 * it is a loopback address (a lab).
 */
import { dirname, resolve } from 'node:path';
import type { ImagePolicy } from '../core/images/types.ts';
import { createRegistryClient, isLoopbackHost } from '../oci/index.ts';
import { createImageScanner, type ImageRepositoryScan } from '../releases/discovery/images.ts';
import type { LoadedConfig } from './config.ts';
import { imagePass } from './images/drive.ts';
import { createImagePlanHolder } from './images/last-plan.ts';
import type { ImagesDeps } from './images/observe.ts';
import type { OperatorStore } from './ports/store.ts';

/** The image policies in force, live; `setImages` is the declared runner's `setImages`. */
export function liveImages(c: LoadedConfig): {
  readonly fileImages: readonly ImagePolicy[];
  readonly policies: () => readonly ImagePolicy[];
  readonly setImages: (policies: readonly ImagePolicy[]) => void;
} {
  const file: readonly ImagePolicy[] = c.fleet.images ?? [];
  let current = file;
  return {
    fileImages: file,
    policies: () => current,
    setImages: (policies) => {
      current = policies;
    },
  };
}

/** `host[:port]/path` split at the first slash. */
export function splitRepository(repository: string): { host: string; path: string } {
  const slash = repository.indexOf('/');
  return { host: repository.slice(0, slash), path: repository.slice(slash + 1) };
}

/**
 * One scan of a repository: the operator's scanner over a client opened for it and closed after;
 * a scan asked for while one of the same repository runs gets that one's answer.
 */
export function repositoryScanner(
  c: LoadedConfig,
  now: () => number = () => Date.now(),
): ImagesDeps['scan'] {
  const scanner = createImageScanner({ now });
  // One scan of a repository at a time: the API's first call and the loop's first pass used to
  // scan the same repositories cold side by side (P12: 60–120 manifest GETs for 60 tags).
  const inFlight = new Map<string, Promise<ImageRepositoryScan>>();
  const once = (repository: string): Promise<ImageRepositoryScan> => {
    const running = inFlight.get(repository);
    if (running !== undefined) return running;
    const scan = scanOnce(repository).finally(() => inFlight.delete(repository));
    inFlight.set(repository, scan);
    return scan;
  };
  const scanOnce = async (repository: string): Promise<ImageRepositoryScan> => {
    const { host, path } = splitRepository(repository);
    const insecure = (host === c.config.registry && c.config.insecure) || isLoopbackHost(host);
    const reader = createRegistryClient({ registry: host, insecure });
    try {
      return await scanner.scan({
        reader,
        registry: host,
        repository: path,
        publicKeyPem: c.publicKeyPem,
      });
    } finally {
      await reader.close();
    }
  };
  return once;
}

/**
 * What `GET /v1/images` observes with, when the config reads a cluster (`kubernetes`); otherwise
 * undefined, and the route answers that this operator follows no images.
 */
export async function imagesDeps(
  c: LoadedConfig,
  configPath: string,
  policies: () => readonly ImagePolicy[],
): Promise<ImagesDeps | undefined> {
  const k = c.config.kubernetes;
  if (k === undefined) return undefined;
  const { loadKubeConfigOrPod } = await import('../platform/kube/client.ts');
  const { createKubeWorkloads } = await import('./adapters/kube-workloads/index.ts');
  const kc = await loadKubeConfigOrPod(k.kubeconfig && resolve(dirname(configPath), k.kubeconfig));
  const now = (): number => Date.now();
  return {
    ...{ policies, workloads: createKubeWorkloads({ kc }), scan: repositoryScanner(c, now), now },
    lastPlan: createImagePlanHolder(),
  };
}

/** The image driver over what observing uses, writing to the operator's store (the leader's pass). */
export function imageDriver(
  deps: ImagesDeps,
  store: OperatorStore,
  log: (line: string) => void,
): { pass(): Promise<void> } {
  return { pass: () => imagePass({ ...deps, store, log }) };
}
