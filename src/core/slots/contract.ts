// SPDX-License-Identifier: Apache-2.0
/**
 * The installer image contract (docs/adr/0004 §2), checked from the manifest's descriptors and the
 * config labels before a single artifact byte is fetched, so an invalid image never touches disk;
 * what only the artifacts' bytes can tell (the `cmdline`, the boot entries the slot will get) is
 * checked while the image is staged, before the inactive slot is touched
 * (`core/boot/staged-image.ts`).
 * Raw layers (`application/vnd.dev.molt.artifact.v1`) are one artifact each, named by their
 * `org.opencontainers.image.title` annotation; tar layers may hold several artifacts, whose names
 * are only known while parsing ({@link checkTarEntry}, {@link checkArtifactSet}).
 */
import { ErrorCode, MoltError } from '../errors.ts';
import { installerMetadata, type InstallerMetadata } from './labels.ts';
import { ArtifactName, RequiredArtifacts } from './slot.ts';

export { InstallerLabel, type InstallerMetadata } from './labels.ts';

export const ArtifactMediaType = 'application/vnd.dev.molt.artifact.v1';
export const TitleAnnotation = 'org.opencontainers.image.title';
/** Default cap on an installer image: the sum of its layer sizes, and of the files a tar layer unpacks to. */
export const defaultMaxImageBytes = 2 * 1024 * 1024 * 1024;
/**
 * Cap on the `cmdline` artifact, and on the kernel command line molt renders from it: the x86
 * kernel's `COMMAND_LINE_SIZE` (2048 bytes); a longer line is cut by the kernel, not refused.
 */
export const MaxCmdlineBytes = 2048;

const tarTypes: Readonly<Record<string, boolean>> = {
  'application/vnd.oci.image.layer.v1.tar': false,
  'application/vnd.oci.image.layer.v1.tar+gzip': true,
  'application/vnd.docker.image.rootfs.diff.tar.gzip': true,
};

/** The parts of a layer descriptor the contract reads. */
export interface LayerDescriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
  readonly annotations?: Readonly<Record<string, string>>;
}

export type PlannedLayer =
  | { readonly kind: 'raw'; readonly artifact: ArtifactName; readonly layer: LayerDescriptor }
  | { readonly kind: 'tar'; readonly gzip: boolean; readonly layer: LayerDescriptor };

/** What to fetch, and the metadata the slot manifest will carry. */
export interface ArtifactPlan extends InstallerMetadata {
  readonly layers: readonly PlannedLayer[];
  /** Sum of the layer sizes. */
  readonly totalBytes: number;
}

export interface PlanInput {
  readonly layers: readonly LayerDescriptor[];
  /** `config.Labels` of the image config. */
  readonly labels: Readonly<Record<string, string>>;
  /** @default {@link defaultMaxImageBytes} */
  readonly maxBytes?: number;
}

const allowed: readonly string[] = Object.values(ArtifactName);

/** True for a name on the artifact allow-list. */
export function isArtifactName(name: string): name is ArtifactName {
  return allowed.includes(name);
}

function invalid(message: string, hint?: string): MoltError {
  return new MoltError(ErrorCode.ImageInvalid, message, {
    hint:
      hint ?? `an installer image carries ${allowed.join(', ')} (vmlinuz and rootfs.img required)`,
  });
}

/** `MOLT_IMAGE_INVALID` for a `cmdline` artifact of `bytes` bytes, over {@link MaxCmdlineBytes}. */
export function cmdlineTooLong(bytes: number): MoltError {
  return invalid(
    `the image's cmdline is ${bytes} bytes, over the ${MaxCmdlineBytes}-byte kernel command line`,
    'keep the kernel arguments of the cmdline artifact short',
  );
}

function planLayer(layer: LayerDescriptor, index: number): PlannedLayer {
  if (!Number.isSafeInteger(layer.size) || layer.size < 0)
    throw invalid(`layer ${index} (${layer.digest}) has an invalid size ${layer.size}`);
  const gzip = tarTypes[layer.mediaType];
  if (gzip !== undefined) return { kind: 'tar', gzip, layer };
  if (layer.mediaType !== ArtifactMediaType)
    throw invalid(
      `layer ${index} (${layer.digest}) has media type ${layer.mediaType}, which is not an installer artifact`,
      `artifact layers are ${ArtifactMediaType}, or OCI tar layers holding the artifacts`,
    );
  if (!/^sha256:[a-f0-9]{64}$/.test(layer.digest))
    throw invalid(
      `layer ${index} has digest ${layer.digest}; artifact layers are addressed by sha256`,
      'push the artifact with a sha256 digest',
    );
  const title = layer.annotations?.[TitleAnnotation];
  if (title === undefined)
    throw invalid(`layer ${index} (${layer.digest}) has no ${TitleAnnotation} annotation`);
  if (!isArtifactName(title))
    throw invalid(`layer ${index} is named "${title}", which is not an installer artifact`);
  if (title === 'cmdline' && layer.size > MaxCmdlineBytes) throw cmdlineTooLong(layer.size);
  return { kind: 'raw', artifact: title, layer };
}

/**
 * Check the contract from the descriptors and labels; throws `MOLT_IMAGE_INVALID` or
 * `MOLT_IMAGE_TOO_LARGE`. Without tar layers the artifact set is complete and checked here.
 */
export function planInstallerImage(input: PlanInput): ArtifactPlan {
  const metadata = installerMetadata(input.labels);
  if (input.layers.length === 0) throw invalid('the image has no layers');
  const layers = input.layers.map(planLayer);
  const totalBytes = layers.reduce((sum, l) => sum + l.layer.size, 0);
  checkTotal(totalBytes, input.maxBytes, 'the sum of its layer sizes');
  const raw = layers.flatMap((l) => (l.kind === 'raw' ? [l.artifact] : []));
  if (raw.length === layers.length) checkArtifactSet(raw);
  else checkUnique(raw);
  return { ...metadata, layers, totalBytes };
}

/** Throw `MOLT_IMAGE_TOO_LARGE` when `bytes` exceeds the cap. */
export function checkTotal(
  bytes: number,
  maxBytes = defaultMaxImageBytes,
  what = 'its artifacts',
): void {
  if (bytes <= maxBytes) return;
  throw new MoltError(
    ErrorCode.ImageTooLarge,
    `the installer image is too large: ${what} come to ${bytes} bytes, over the ${maxBytes}-byte limit`,
    { hint: "build a smaller image, or raise the agent's image size limit" },
  );
}

function checkUnique(names: readonly ArtifactName[]): void {
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup !== undefined) throw invalid(`the image carries artifact "${dup}" more than once`);
}

/** The final artifact set: no duplicates, vmlinuz and rootfs.img present. */
export function checkArtifactSet(names: readonly ArtifactName[]): void {
  checkUnique(names);
  const missing = RequiredArtifacts.filter((r) => !names.includes(r));
  if (missing.length > 0) throw invalid(`the image has no ${missing.join(' and ')}`);
}

export { checkTarEntry, type TarEntryHeader } from './tar-entry.ts';
