// SPDX-License-Identifier: Apache-2.0
/** A fake registry and a plain-HTTP client on it for one suite: started before it, closed after. */
import { after, before } from 'node:test';
import { createRegistryClient, type OciRegistryClient } from '../oci/index.ts';
import { startFakeRegistry, type FakeRegistry } from './fake-registry.ts';

export interface FakeRegistryHooks {
  registry(): FakeRegistry;
  client(): OciRegistryClient;
}

/** Call inside a `describe`: the registry and client exist from its `before` to its `after`. */
export function useFakeRegistry(): FakeRegistryHooks {
  let registry: FakeRegistry | undefined;
  let client: OciRegistryClient | undefined;
  before(async () => {
    registry = await startFakeRegistry();
    client = createRegistryClient({ registry: registry.url, insecure: true });
  });
  after(async () => {
    await client?.close();
    await registry?.close();
  });
  const started = <T>(x: T | undefined): T => {
    if (x === undefined) throw new Error('the fake registry is used outside its suite');
    return x;
  };
  return { registry: () => started(registry), client: () => started(client) };
}
