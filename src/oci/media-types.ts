// SPDX-License-Identifier: Apache-2.0
/** Media types of the OCI image spec and Docker schema 2, as molt reads and writes them. */
export const MediaType = {
  OciIndex: 'application/vnd.oci.image.index.v1+json',
  OciManifest: 'application/vnd.oci.image.manifest.v1+json',
  OciConfig: 'application/vnd.oci.image.config.v1+json',
  OciLayerGzip: 'application/vnd.oci.image.layer.v1.tar+gzip',
  OciLayer: 'application/vnd.oci.image.layer.v1.tar',
  OciEmpty: 'application/vnd.oci.empty.v1+json',
  DockerManifestList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  DockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
  DockerConfig: 'application/vnd.docker.container.image.v1+json',
  DockerLayerGzip: 'application/vnd.docker.image.rootfs.diff.tar.gzip',
} as const;

/** The manifest types the client understands, in the order it prefers them. */
export const manifestMediaTypes: readonly string[] = [
  MediaType.OciIndex,
  MediaType.OciManifest,
  MediaType.DockerManifestList,
  MediaType.DockerManifest,
];

/**
 * The `Accept` header for every manifest GET and HEAD. Registry 2.8.2 answers 404 for OCI content
 * when `Accept` does not name the OCI types, even on HEAD by digest, so the header is always sent.
 */
export const manifestAccept = manifestMediaTypes.join(', ');

/** True for a multi-platform list (OCI index or Docker manifest list). */
export function isIndexType(mediaType: string): boolean {
  return mediaType === MediaType.OciIndex || mediaType === MediaType.DockerManifestList;
}

/** True for a single-platform image manifest (OCI or Docker schema 2). */
export function isImageManifestType(mediaType: string): boolean {
  return mediaType === MediaType.OciManifest || mediaType === MediaType.DockerManifest;
}

/** `Content-Type` without parameters, lower-cased; clients must ignore the parameters. */
export function bareMediaType(contentType: string | null): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}
