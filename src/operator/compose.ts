// SPDX-License-Identifier: Apache-2.0
/**
 * Pieces of the operator's composition root (docs/adr/0005 §4) that tests use too: the release
 * source over molt's OCI client and discovery, and the fleet file's machines as the store's
 * inventory. `main.ts` is the only place that chooses adapters.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorCode, isMoltError, MoltError } from '../core/errors.ts';
import type { Release } from '../core/releases/release.ts';
import type { FleetSnapshot } from '../core/rollout/types.ts';
import { createRegistryClient } from '../oci/index.ts';
import { discoverReleases, InMemoryReleaseCache } from '../releases/index.ts';
import type { MachineRecord, OperatorStore } from './ports/store.ts';
import type { MachineProvider } from './ports/provider.ts';
import type { LoadedConfig } from './config.ts';
import { createHttpProvider } from './adapters/http-provider/index.ts';
import { createCapiProvider } from './adapters/capi-provider/index.ts';
import type { CapiMachines } from './ports/capi-machines.ts';

export interface ReleaseSourceOptions {
  readonly registry: string;
  readonly repository: string;
  readonly insecure?: boolean;
  readonly publicKeyPem?: string;
}

/** A discovery scan per call; metadata is cached by digest in memory, so re-scans are cheap. */
export function createReleaseSource(o: ReleaseSourceOptions): () => Promise<readonly Release[]> {
  const cache = new InMemoryReleaseCache();
  return async () => {
    const reader = createRegistryClient({ registry: o.registry, insecure: o.insecure === true });
    try {
      const result = await discoverReleases({
        reader,
        repository: o.repository,
        cache,
        registry: o.registry,
        publicKeyPem: o.publicKeyPem,
      });
      return result.releases;
    } finally {
      await reader.close();
    }
  };
}

/** The fleet file's machines as the operator manages them: each needs its agent's endpoint. */
export function machineRecords(fleet: FleetSnapshot, source: string): MachineRecord[] {
  return fleet.machines.map((m) => {
    if (m.endpoint === undefined)
      throw new MoltError(ErrorCode.FleetInvalid, `${source}: machine ${m.id} has no endpoint`, {
        hint: 'the operator reaches each agent at its endpoint: add `endpoint: https://host:port`',
      });
    return {
      id: m.id,
      endpoint: m.endpoint,
      role: m.role,
      pool: m.pool,
      labels: m.labels,
      ...(m.cluster !== undefined && { cluster: m.cluster }),
    };
  });
}

/**
 * Make the store's inventory what the fleet file says (machines added, changed, removed), keeping
 * machines that registered through the API or came from Nodes — unless the file now names the same
 * id: the file wins.
 */
export async function syncInventory(
  store: OperatorStore,
  machines: readonly MachineRecord[],
): Promise<void> {
  const known = (await store.read()).machines;
  const wanted = new Set(machines.map((m) => m.id));
  for (const m of machines) await store.putMachine(m);
  for (const m of known)
    if (!wanted.has(m.id) && m.registered !== true && m.fromNode !== true)
      await store.removeMachine(m.id);
}

/** Store failures an operator waits out at start-up: etcd away, a member down, no quorum yet. */
const transient: readonly string[] = [ErrorCode.EtcdUnhealthy, ErrorCode.TimedOut];

/**
 * {@link syncInventory}, retried with backoff (0.25 s doubling to 5 s) while the store is
 * unreachable: an operator started while etcd is down, or while the member it dialled is being
 * upgraded, waits for it like its loop does, instead of exiting.
 */
export async function syncInventoryWhenReachable(
  store: OperatorStore,
  machines: readonly MachineRecord[],
  log: (line: string) => void,
): Promise<void> {
  for (let waitMs = 250; ; waitMs = Math.min(waitMs * 2, 5_000)) {
    try {
      await syncInventory(store, machines);
      return;
    } catch (e) {
      if (!isMoltError(e) || !transient.includes(e.code)) throw e;
      log(
        `the store is not reachable yet (${e.code}: ${e.message}); retrying in ${String(waitMs)} ms`,
      );
    }
    await sleep(waitMs);
  }
}

/**
 * A pool's machine provider when it configures one (replace strategy and its fallback), looked up
 * in the pools as they are now (declared pools change) and made once per setting: the HTTP
 * extension, or Cluster API over `capi` (the Machines of `capi.kubeconfig`). A declared pool that
 * names Cluster API when the config has no `capi.kubeconfig` gets a provider that refuses.
 */
export function providersOf(
  c: LoadedConfig,
  capi?: CapiMachines,
): (pool: string) => MachineProvider | undefined {
  const made = new Map<string, MachineProvider>();
  return (name) => {
    const provider = c.fleet.pools.find((p) => p.name === name)?.provider;
    if (provider === undefined) return undefined;
    const key = JSON.stringify(provider);
    const known =
      made.get(key) ??
      ('capi' in provider
        ? capi === undefined
          ? noCapi
          : createCapiProvider(capi, c.config.capi?.clusters ?? {})
        : createHttpProvider(provider));
    made.set(key, known);
    return known;
  };
}

const noCapiError = (): MoltError =>
  new MoltError(
    ErrorCode.ProviderFailed,
    'the pool names Cluster API as its provider, but the operator config has no capi.kubeconfig',
    { hint: 'set capi.kubeconfig (the management cluster) in the operator config' },
  );

/** The provider of a Cluster API pool the operator cannot reach Cluster API for. */
const noCapi: MachineProvider = {
  replace: () => Promise.reject(noCapiError()),
  status: () => Promise.reject(noCapiError()),
};
