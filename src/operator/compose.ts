// SPDX-License-Identifier: Apache-2.0
/**
 * Pieces of the operator's composition root (docs/adr/0005 §4) that tests use too: the release
 * source over molt's OCI client and discovery, and the fleet file's machines as the store's
 * inventory. `main.ts` is the only place that chooses adapters.
 */
import { ErrorCode, MoltError } from '../core/errors.ts';
import type { Release } from '../core/releases/release.ts';
import type { FleetSnapshot } from '../core/rollout/types.ts';
import { createRegistryClient } from '../oci/index.ts';
import { discoverReleases, InMemoryReleaseCache } from '../releases/index.ts';
import type { MachineRecord, OperatorStore } from './ports/store.ts';

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
 * machines that registered through the API — unless the file now names the same id: the file wins.
 */
export async function syncInventory(
  store: OperatorStore,
  machines: readonly MachineRecord[],
): Promise<void> {
  const known = (await store.read()).machines;
  const wanted = new Set(machines.map((m) => m.id));
  for (const m of machines) await store.putMachine(m);
  for (const m of known)
    if (!wanted.has(m.id) && m.registered !== true) await store.removeMachine(m.id);
}
