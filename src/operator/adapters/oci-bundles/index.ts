// SPDX-License-Identifier: Apache-2.0
/**
 * {@link BundleResolver} over molt's OCI client (docs/adr/0012 §2): `HEAD <repository>:<version>`
 * in the operator's registry, answered as `host/repository@sha256:…` (the agents pull by digest,
 * so what was checked is what runs). A missing tag is undefined; a registry that cannot be asked
 * throws its own code (`MOLT_REGISTRY_*`), which fails the check rather than passing it.
 */
import { createRegistryClient } from '../../../oci/index.ts';
import type { BundleResolver } from '../../ports/kube-health.ts';

export interface OciBundleOptions {
  readonly registry: string;
  readonly insecure?: boolean;
}

export function createOciBundleResolver(o: OciBundleOptions): BundleResolver {
  const host = o.registry.replace(/^https?:\/\//, '').replace(/\/$/, '');
  return {
    async resolve(repository, version) {
      const reader = createRegistryClient({ registry: o.registry, insecure: o.insecure === true });
      try {
        const d = await reader.headManifest(repository, version);
        return d === undefined ? undefined : `${host}/${repository}@${d.digest}`;
      } finally {
        await reader.close();
      }
    },
  };
}
