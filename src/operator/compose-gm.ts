// SPDX-License-Identifier: Apache-2.0
/**
 * The GM checks, composed (docs/adr/0013 decision 5): every GM digest of the image policies in
 * force is HEADed on the discovery cadence (`discoverEvery`), through molt's OCI client with the
 * hosts' rules `compose-images.ts` has (plain HTTP only for the operator's own insecure registry or
 * a loopback host). Only the leader checks — its findings are the `molt_image_gm_missing` metric
 * and the `GMImageMissing` condition, and a standby's would be stale — and only it records: one log
 * line per change, and one `warning` in the history when a digest goes missing (the signal of a
 * fleet-file policy, which has no object to carry a condition).
 */
import type { ImagePolicy } from '../core/images/types.ts';
import { createRegistryClient, isLoopbackHost } from '../oci/index.ts';
import { imagesDeps, splitRepository } from './compose-images.ts';
import type { LoadedConfig } from './config.ts';
import { every } from './images/every.ts';
import { createGmWatch, type GmExists, type GmState, type GmWatch } from './images/gm-check.ts';
import { gmChangeLine, gmChanges } from './images/gm-status.ts';
import type { ImagesDeps } from './images/observe.ts';
import type { Leadership } from './ports/leadership.ts';
import type { OperatorStore } from './ports/store.ts';
import { recordTransition, type TransitionSink } from './transitions/record.ts';
import { errorMessage } from '../core/errors.ts';

/** HEAD a manifest by digest on its registry (a client opened for the call and closed after). */
export function registryExists(c: LoadedConfig): GmExists {
  return async (repository, digest) => {
    const { host, path } = splitRepository(repository);
    const insecure = (host === c.config.registry && c.config.insecure) || isLoopbackHost(host);
    const client = createRegistryClient({ registry: host, insecure });
    try {
      return (await client.headManifest(path, digest)) !== undefined;
    } finally {
      await client.close();
    }
  };
}

/** The GM watch over the live policies and the config's registries. */
export const gmWatchOf = (c: LoadedConfig, policies: () => readonly ImagePolicy[]): GmWatch =>
  createGmWatch({ policies, exists: registryExists(c) });

/**
 * `compose-images.ts`'s `imagesDeps` with the GM watch (`gm`): the API's metrics read its findings,
 * the declared runner its conditions, {@link gmChecks} runs it. Undefined as `imagesDeps` is.
 */
export async function imagesDepsWithGm(
  c: LoadedConfig,
  configPath: string,
  policies: () => readonly ImagePolicy[],
): Promise<(ImagesDeps & { readonly gm: GmWatch }) | undefined> {
  const deps = await imagesDeps(c, configPath, policies);
  return deps && { ...deps, gm: gmWatchOf(c, policies) };
}

export interface GmChecks {
  /** Stop checking; resolves once a check in flight is done. */
  stop(): Promise<void>;
}

/** One check of the leader's: the findings, then a log line per change and a warning per loss. */
export async function gmPass(
  watch: GmWatch,
  sink: TransitionSink,
  states: ReadonlyMap<string, GmState>,
): Promise<ReadonlyMap<string, GmState>> {
  const { changes, next } = gmChanges(states, await watch.check());
  for (const change of changes) {
    const message = gmChangeLine(change);
    const f = change.finding;
    if (f.state !== 'missing') {
      sink.log?.(message);
      continue;
    }
    await recordTransition(sink, {
      write: () => Promise.resolve(),
      record: {
        log: message,
        event: {
          kind: 'warning',
          message,
          data: { policy: f.policy, repository: f.repository, digest: f.digest, reason: f.reason },
        },
      },
    });
  }
  return next;
}

/**
 * Check every `everyMs` (the first at once) while `leading()`; a standby forgets what it saw, so
 * the metric is the leader's alone and a new leader reports the missing digests once again.
 */
export function startGmChecks(o: {
  readonly watch: GmWatch;
  readonly everyMs: number;
  readonly leading: () => boolean;
  readonly sink: TransitionSink;
}): GmChecks {
  let states: ReadonlyMap<string, GmState> = new Map();
  const tick = async (): Promise<void> => {
    if (!o.leading()) {
      o.watch.clear();
      states = new Map();
      return;
    }
    try {
      states = await gmPass(o.watch, o.sink, states);
    } catch (e) {
      // The history write failed (the store is away): the next check says it again.
      o.sink.log?.(`GM image check: ${errorMessage(e)}`);
    }
  };
  return every(o.everyMs, tick);
}

/** The GM checks of `main.ts`: none when the operator follows no images. */
export function gmChecks(
  c: LoadedConfig,
  watch: GmWatch | undefined,
  p: {
    readonly store: OperatorStore;
    readonly leadership: Leadership;
    readonly log: (line: string) => void;
  },
): GmChecks | undefined {
  if (watch === undefined) return undefined;
  return startGmChecks({
    watch,
    everyMs: c.config.discoverEvery,
    leading: () => p.leadership.isLeader(),
    sink: { store: p.store, log: p.log, now: () => Date.now() },
  });
}
