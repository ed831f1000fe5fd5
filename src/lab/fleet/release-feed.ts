// SPDX-License-Identifier: Apache-2.0
/** The lab fleet's registry as a release feed: publish an installer image, remember its digest. */
import { createRegistryClient } from '../../oci/index.ts';
import { pushInstallerImage } from '../services/installer-image.ts';
import type { RunningRegistry } from '../services/registry.ts';

/** The repository of the lab's releases (what the operator discovers). */
export const repository = 'molt/installer';
export const official = { 'dev.molt.official': 'true' };

/** The fleet's registry as a release feed: publish a lab installer image, remember its digest. */
export interface ReleaseFeed {
  readonly image: (version: string) => string;
  readonly digest: (version: string) => string;
  /** Push `version` with `labels` (and `artifacts`, else small random ones); its digest. */
  readonly publish: (
    version: string,
    labels: Record<string, string>,
    artifacts?: Readonly<Record<string, Uint8Array>>,
  ) => Promise<string>;
}

export function releaseFeed(registry: RunningRegistry): ReleaseFeed {
  const digests = new Map<string, string>();
  return {
    image: (version: string): string => `${registry.host}/${repository}:${version}`,
    digest: (version: string): string => digests.get(version) ?? '',
    publish: async (
      version: string,
      labels: Record<string, string>,
      artifacts?: Readonly<Record<string, Uint8Array>>,
    ): Promise<string> => {
      const client = createRegistryClient({ registry: registry.host, insecure: true });
      try {
        const pushed = await pushInstallerImage(client, repository, version, {
          version,
          labels,
          ...(artifacts !== undefined && { artifacts }),
        });
        digests.set(version, pushed.digest);
        return pushed.digest;
      } finally {
        await client.close();
      }
    },
  };
}
