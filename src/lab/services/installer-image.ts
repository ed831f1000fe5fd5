// SPDX-License-Identifier: Apache-2.0
/**
 * Lab releases (docs/adr/0004 §2): installer images whose artifacts are raw layers
 * (`application/vnd.dev.molt.artifact.v1`, titled) of random bytes — a lab machine installs them
 * into its slot files like real ones — labelled with `dev.molt.version` and optional lab behaviour
 * (`dev.molt.lab.boot=fail`, `dev.molt.lab.health=never`).
 */
import { randomBytes } from 'node:crypto';
import { ArtifactMediaType, InstallerLabel, TitleAnnotation } from '../../core/slots/contract.ts';
import {
  buildImage,
  pushImage,
  type BuiltImage,
  type LayerInput,
  type RegistryWriter,
} from '../../oci/index.ts';

export interface InstallerImageSpec {
  /** `dev.molt.version`. @default '1.0.0' */
  readonly version?: string;
  /** Artifact name → bytes, or a size of random (incompressible) bytes. @default small vmlinuz, initrd.img, rootfs.img */
  readonly artifacts?: Readonly<Record<string, Uint8Array | number>>;
  /** Further config labels (lab behaviour, or broken labels for bad-input tests). */
  readonly labels?: Readonly<Record<string, string>>;
  /** Layers instead of one raw layer per artifact (tests: tar layers). */
  readonly layers?: (artifacts: Readonly<Record<string, Uint8Array>>) => LayerInput[];
  /** Layers appended as given (duplicates, foreign media types, hand-made tar layers). */
  readonly extraLayers?: readonly LayerInput[];
  /** Omit the version label entirely. */
  readonly noVersion?: boolean;
}

export interface InstallerImage {
  readonly built: BuiltImage;
  /** The artifact bytes, by name. */
  readonly artifacts: Readonly<Record<string, Uint8Array>>;
}

const defaults: Readonly<Record<string, Uint8Array | number>> = {
  vmlinuz: 4096,
  'initrd.img': 2048,
  'rootfs.img': 65_536,
};

/** A raw artifact layer. */
export function artifactLayer(name: string, bytes: Uint8Array): LayerInput {
  return { mediaType: ArtifactMediaType, bytes, annotations: { [TitleAnnotation]: name } };
}

/** Build (but do not push) an installer image. */
export function buildInstallerImage(spec: InstallerImageSpec = {}): InstallerImage {
  const artifacts: Record<string, Uint8Array> = {};
  for (const [name, v] of Object.entries(spec.artifacts ?? defaults))
    artifacts[name] = typeof v === 'number' ? new Uint8Array(randomBytes(v)) : v;
  const layers =
    spec.layers?.(artifacts) ??
    Object.entries(artifacts).map(([name, bytes]) => artifactLayer(name, bytes));
  const labels = {
    ...(spec.noVersion === true ? {} : { [InstallerLabel.Version]: spec.version ?? '1.0.0' }),
    ...spec.labels,
  };
  const built = buildImage({
    labels,
    layers: [...layers, ...(spec.extraLayers ?? [])],
    created: '2026-11-22T10:00:00Z',
  });
  return { built, artifacts };
}

/** Build and push an installer image under `tag`; returns the image and its manifest digest. */
export async function pushInstallerImage(
  client: RegistryWriter,
  repository: string,
  tag: string,
  spec: InstallerImageSpec = {},
): Promise<InstallerImage & { readonly digest: string }> {
  const image = buildInstallerImage(spec);
  const digest = await pushImage(client, repository, [tag], image.built);
  return { ...image, digest };
}
