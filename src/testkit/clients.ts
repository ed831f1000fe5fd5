// SPDX-License-Identifier: Apache-2.0
import { createRegistryClient, type Credentials, type OciRegistryClient } from '../oci/index.ts';

/**
 * A factory of registry clients for one test file: each client talks plain HTTP to the host
 * `host()` returns (read lazily, so the factory can be made before the registry starts), never
 * retries (so auth failures surface at once), and is closed by `closeAll()`.
 */
export function clientFactory(host: () => string): {
  client: (credentials?: Credentials) => OciRegistryClient;
  closeAll: () => Promise<void>;
} {
  const clients: OciRegistryClient[] = [];
  return {
    client: (credentials) => {
      const c = createRegistryClient({
        registry: host(),
        insecure: true,
        retries: 0,
        ...(credentials && { credentials }),
      });
      clients.push(c);
      return c;
    },
    closeAll: async () => {
      for (const c of clients.splice(0)) await c.close();
    },
  };
}
