// SPDX-License-Identifier: Apache-2.0
// Seeding a real registry for the discovery suites: a small release repository with every case
// discovery must handle (aliases, version fallback, junk tags, a broken config, a bad label).
import {
  buildImage,
  buildIndex,
  MediaType,
  pushImage,
  type OciRegistryClient,
} from '../../src/oci/index.ts';
import { ReleaseLabel } from '../../src/core/releases/release.ts';

const layer = {
  mediaType: MediaType.OciLayer,
  bytes: new TextEncoder().encode('installer payload'),
};

/** A release image with the usual labels plus `extra`. */
export function releaseImage(
  extra: Record<string, string> = {},
  arch = 'amd64',
): ReturnType<typeof buildImage> {
  return buildImage({
    labels: { [ReleaseLabel.Channels]: 'stable', [ReleaseLabel.Official]: 'true', ...extra },
    layers: [layer],
    created: '2026-01-01T00:00:00Z',
    platform: { os: 'linux', architecture: arch },
  });
}

/** Push a manifest whose config blob is not JSON; returns its digest. */
export async function pushBrokenConfig(
  client: OciRegistryClient,
  repository: string,
  tags: readonly string[],
): Promise<string> {
  const config = await client.pushBlob(
    repository,
    new TextEncoder().encode('this is not json {'),
    MediaType.OciConfig,
  );
  const manifest = new TextEncoder().encode(
    JSON.stringify({ schemaVersion: 2, mediaType: MediaType.OciManifest, config, layers: [] }),
  );
  let digest = '';
  for (const tag of tags)
    digest = await client.pushManifest(repository, tag, manifest, MediaType.OciManifest);
  return digest;
}

/** Digests of the seeded releases, by name. */
export interface Seeded {
  readonly rev1: string;
  readonly rev2: string;
  readonly v190: string;
  readonly multi: string;
  readonly broken: string;
  readonly badRange: string;
}

/**
 * The repository:
 * - `1.8.0-rev1`, `1.8.0-rev1-b100` → rev1 (no version label: version falls back to the tag)
 * - `1.8.0`, `1.8.0-rev2`, `1.8.0-rev2-b101` → rev2
 * - `1.9.0`, `v1.9.0-rev1`, `latest` → v190 (version label `1.9.0`)
 * - `1.10.0` → an OCI index (amd64 labels say channel stable, arm64 say beta)
 * - `2.0.0`, `2.0.0-rev1` → a manifest whose config is garbage
 * - `1.7.0` → a release with an invalid Kubernetes range label
 * - `sha256-<hex>.sig`, `nightly`, `1.9.0-rev02` → junk tags that must be skipped
 */
export async function seedRepository(
  client: OciRegistryClient,
  repository: string,
): Promise<Seeded> {
  const rev1 = await pushImage(
    client,
    repository,
    ['1.8.0-rev1', '1.8.0-rev1-b100'],
    releaseImage({ build: '100' }),
  );
  const rev2 = await pushImage(
    client,
    repository,
    ['1.8.0', '1.8.0-rev2', '1.8.0-rev2-b101'],
    releaseImage({ build: '101' }),
  );
  const v190 = await pushImage(
    client,
    repository,
    ['1.9.0', 'v1.9.0-rev1', 'latest'],
    releaseImage({
      [ReleaseLabel.Version]: '1.9.0',
      [ReleaseLabel.Kubernetes]: '>=1.30.0 <1.33.0',
    }),
  );
  const index = buildIndex([
    releaseImage({ build: '300' }),
    releaseImage({ [ReleaseLabel.Channels]: 'beta' }, 'arm64'),
  ]);
  const multi = await pushImage(client, repository, ['1.10.0'], index);
  const broken = await pushBrokenConfig(client, repository, ['2.0.0', '2.0.0-rev1']);
  const badRange = await pushImage(
    client,
    repository,
    ['1.7.0'],
    releaseImage({ [ReleaseLabel.Kubernetes]: 'not a range!' }),
  );
  await pushImage(
    client,
    repository,
    [`sha256-${'e'.repeat(64)}.sig`, 'nightly', '1.9.0-rev02'],
    releaseImage({ junk: 'yes' }),
  );
  return { rev1, rev2, v190, multi, broken, badRange };
}
