// SPDX-License-Identifier: Apache-2.0
/** molt's OCI Distribution client: reading, pushing, and building images (docs/adr/0003-oci-client.md). */
import { OciRegistryClient, type OciClientOptions } from './client.ts';

export type * from './types.ts';
export { OciRegistryClient, type OciClientOptions } from './client.ts';
export {
  MediaType,
  manifestAccept,
  manifestMediaTypes,
  isIndexType,
  isImageManifestType,
} from './media-types.ts';
export { sha256Digest, verifyDigest } from './digest.ts';
export { isDigest, isTag } from './names.ts';
export { parseChallenges, type Challenge } from './challenge.ts';
export { nextLink } from './link.ts';
export {
  parseImageManifest,
  parseIndex,
  selectPlatform,
  formatPlatform,
  type ImageManifest,
  type ImageIndex,
} from './manifest.ts';
export { referrersTag } from './referrers.ts';
export { buildImage, buildIndex, buildArtifact } from './image.ts';
export type {
  Blob,
  Built,
  BuiltArtifact,
  BuiltImage,
  BuiltIndex,
  ImageSpec,
  IndexOptions,
  ArtifactSpec,
  LayerInput,
  RunConfig,
} from './image.ts';
export { pushImage, pushReferrer } from './push.ts';
export { RegistryError } from './http-errors.ts';
export { clientOptionsFor, credentialsFor, isLoopbackHost } from './credential-scope.ts';
export type { BlobSink } from './body.ts';

/** Create a registry client for one registry; call `close()` on it when done to free connections. */
export function createRegistryClient(options: OciClientOptions): OciRegistryClient {
  return new OciRegistryClient(options);
}
