// SPDX-License-Identifier: Apache-2.0
import { gunzipSync } from 'node:zlib';
import { sha256Digest } from './digest.ts';
import { MediaType } from './media-types.ts';
import type { Descriptor, Platform } from './types.ts';

/** Bytes with the descriptor that points at them. */
export interface Blob {
  readonly descriptor: Descriptor;
  readonly bytes: Uint8Array;
}

/** One layer to put into an image. */
export interface LayerInput {
  readonly mediaType: string;
  readonly bytes: Uint8Array;
  /** Descriptor annotations, e.g. `org.opencontainers.image.title` of an installer artifact layer. */
  readonly annotations?: Readonly<Record<string, string>>;
}

/**
 * How a container runtime runs the image (the config's `config` section, OCI image spec
 * config.md): what is omitted is left out of the config, so an image without it keeps its digest.
 */
export interface RunConfig {
  /** `Entrypoint`: the argv the container starts with (a pod's `command` replaces it). */
  readonly entrypoint?: readonly string[];
  /** `Cmd`: arguments after the entrypoint, or the argv without one (a pod's `args` replace it). */
  readonly cmd?: readonly string[];
  /** `Env`, as `NAME=value`. */
  readonly env?: readonly string[];
  /** `WorkingDir`. */
  readonly workingDir?: string;
  /** `User`: `uid[:gid]` (or a name the image's /etc/passwd knows); omitted: root. */
  readonly user?: string;
}

/** What {@link buildImage} builds. */
export interface ImageSpec {
  /** Config labels (`config.Labels`): where molt keeps release metadata. */
  readonly labels?: Readonly<Record<string, string>>;
  /** What a container runtime runs; none for images that are only pulled as files. */
  readonly run?: RunConfig;
  readonly layers?: readonly LayerInput[];
  /** RFC 3339 creation time; omitted from the config when not given (as reproducible builds do). */
  readonly created?: string;
  /** @default linux/amd64 */
  readonly platform?: Platform;
  /** Manifest annotations. */
  readonly annotations?: Readonly<Record<string, string>>;
  /** OCI image manifest or Docker schema 2. @default 'oci' */
  readonly format?: 'oci' | 'docker';
}

/** A single-platform image: config, layers and manifest, ready to push. */
export interface BuiltImage {
  readonly kind: 'image';
  readonly config: Blob;
  readonly layers: readonly Blob[];
  /** The manifest; its descriptor carries the platform, for use in an index. */
  readonly manifest: Blob;
}

/** A multi-platform index (or Docker manifest list) over images. */
export interface BuiltIndex {
  readonly kind: 'index';
  readonly images: readonly BuiltImage[];
  readonly manifest: Blob;
}

/** An OCI 1.1 artifact (signature, SBOM, …) that may refer to a subject. */
export interface BuiltArtifact {
  readonly kind: 'artifact';
  readonly config: Blob;
  readonly layers: readonly Blob[];
  readonly manifest: Blob;
  readonly subject?: Descriptor;
}

/** Anything {@link pushImage} can push. */
export type Built = BuiltImage | BuiltIndex | BuiltArtifact;

const encoder = new TextEncoder();

function blob(mediaType: string, bytes: Uint8Array, extra: Partial<Descriptor> = {}): Blob {
  return {
    bytes,
    descriptor: { mediaType, digest: sha256Digest(bytes), size: bytes.byteLength, ...extra },
  };
}

function json(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

/** The uncompressed digest of a layer; a gzip layer that does not inflate is hashed as it is. */
function diffId(layer: LayerInput): string {
  if (!layer.mediaType.endsWith('gzip')) return sha256Digest(layer.bytes);
  try {
    return sha256Digest(gunzipSync(layer.bytes));
  } catch {
    return sha256Digest(layer.bytes);
  }
}

function runConfig(run: RunConfig | undefined): Record<string, unknown> {
  if (run === undefined) return {};
  return {
    ...(run.env !== undefined && { Env: run.env }),
    ...(run.entrypoint !== undefined && { Entrypoint: run.entrypoint }),
    ...(run.cmd !== undefined && { Cmd: run.cmd }),
    ...(run.workingDir !== undefined && { WorkingDir: run.workingDir }),
    ...(run.user !== undefined && { User: run.user }),
  };
}

/** Build an image config and manifest; the same spec always yields the same bytes and digests. */
export function buildImage(spec: ImageSpec): BuiltImage {
  const platform = spec.platform ?? { os: 'linux', architecture: 'amd64' };
  const docker = spec.format === 'docker';
  const layerInputs = spec.layers ?? [];
  const config = blob(
    docker ? MediaType.DockerConfig : MediaType.OciConfig,
    json({
      ...(spec.created !== undefined && { created: spec.created }),
      architecture: platform.architecture,
      os: platform.os,
      ...(platform.variant !== undefined && { variant: platform.variant }),
      config: { ...runConfig(spec.run), Labels: { ...spec.labels } },
      rootfs: { type: 'layers', diff_ids: layerInputs.map(diffId) },
      history: layerInputs.map(() => ({
        ...(spec.created !== undefined && { created: spec.created }),
        created_by: 'molt image builder',
      })),
    }),
  );
  const layers = layerInputs.map((l) =>
    blob(l.mediaType, l.bytes, l.annotations === undefined ? {} : { annotations: l.annotations }),
  );
  const mediaType = docker ? MediaType.DockerManifest : MediaType.OciManifest;
  const manifest = blob(
    mediaType,
    json({
      schemaVersion: 2,
      mediaType,
      config: config.descriptor,
      layers: layers.map((l) => l.descriptor),
      ...(spec.annotations !== undefined && { annotations: spec.annotations }),
    }),
    { platform },
  );
  return { kind: 'image', config, layers, manifest };
}

/** Options of {@link buildIndex}. */
export interface IndexOptions {
  readonly annotations?: Readonly<Record<string, string>>;
  /** OCI index or Docker manifest list. @default 'oci' */
  readonly format?: 'oci' | 'docker';
}

/** Build an index over platform images; each entry carries its image's platform. */
export function buildIndex(images: readonly BuiltImage[], options: IndexOptions = {}): BuiltIndex {
  const mediaType = options.format === 'docker' ? MediaType.DockerManifestList : MediaType.OciIndex;
  const manifest = blob(
    mediaType,
    json({
      schemaVersion: 2,
      mediaType,
      manifests: images.map((i) => i.manifest.descriptor),
      ...(options.annotations !== undefined && { annotations: options.annotations }),
    }),
  );
  return { kind: 'index', images, manifest };
}

/** What {@link buildArtifact} builds. */
export interface ArtifactSpec {
  readonly artifactType: string;
  readonly blobs: readonly LayerInput[];
  readonly subject?: Descriptor;
  readonly annotations?: Readonly<Record<string, string>>;
}

/** Build an OCI 1.1 artifact manifest: empty config, `artifactType`, optional `subject`. */
export function buildArtifact(spec: ArtifactSpec): BuiltArtifact {
  const config = blob(MediaType.OciEmpty, encoder.encode('{}'));
  const layers = spec.blobs.map((b) => blob(b.mediaType, b.bytes));
  const subject =
    spec.subject === undefined
      ? undefined
      : { mediaType: spec.subject.mediaType, digest: spec.subject.digest, size: spec.subject.size };
  const manifest = blob(
    MediaType.OciManifest,
    json({
      schemaVersion: 2,
      mediaType: MediaType.OciManifest,
      artifactType: spec.artifactType,
      config: config.descriptor,
      layers: layers.map((l) => l.descriptor),
      ...(subject !== undefined && { subject }),
      ...(spec.annotations !== undefined && { annotations: spec.annotations }),
    }),
    {
      artifactType: spec.artifactType,
      ...(spec.annotations !== undefined && { annotations: spec.annotations }),
    },
  );
  return { kind: 'artifact', config, layers, manifest, ...(subject !== undefined && { subject }) };
}
