// SPDX-License-Identifier: Apache-2.0
import { ErrorCode, MoltError } from '../protocol/index.ts';
import { isImageManifestType } from './media-types.ts';
import { isDigest } from './names.ts';
import type { Descriptor, Platform } from './types.ts';

/** An image manifest (OCI or Docker schema 2), reduced to what molt uses. */
export interface ImageManifest {
  readonly config: Descriptor;
  readonly layers: readonly Descriptor[];
  readonly annotations: Readonly<Record<string, string>>;
  readonly subject?: Descriptor;
  readonly artifactType?: string;
}

/** An index or manifest list, reduced to what molt uses. */
export interface ImageIndex {
  readonly manifests: readonly Descriptor[];
  readonly annotations: Readonly<Record<string, string>>;
}

type Json = Readonly<Record<string, unknown>>;

/** True for a JSON object (not null, not an array). */
export const isObject = (v: unknown): v is Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function invalid(what: string, problem: string): MoltError {
  return new MoltError(ErrorCode.ManifestInvalid, `${what} is not a valid manifest: ${problem}`);
}

function stringMap(
  v: unknown,
  what: string,
  field: string,
): Readonly<Record<string, string>> | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v) || Object.values(v).some((x) => typeof x !== 'string'))
    throw invalid(what, `${field} must map strings to strings`);
  return v as Readonly<Record<string, string>>;
}

function platformOf(v: unknown, what: string): Platform | undefined {
  if (v === undefined) return undefined;
  if (!isObject(v) || typeof v['os'] !== 'string' || typeof v['architecture'] !== 'string')
    throw invalid(what, 'platform needs os and architecture');
  const variant = v['variant'];
  return {
    os: v['os'],
    architecture: v['architecture'],
    ...(typeof variant === 'string' && { variant }),
  };
}

/** Validate one content descriptor; `field` names it in the message. */
export function parseDescriptor(v: unknown, what: string, field: string): Descriptor {
  if (!isObject(v)) throw invalid(what, `${field} is not an object`);
  const { mediaType, digest, size, artifactType } = v;
  if (typeof mediaType !== 'string' || mediaType === '')
    throw invalid(what, `${field}.mediaType is missing`);
  if (typeof digest !== 'string' || !isDigest(digest))
    throw invalid(what, `${field}.digest is not a digest`);
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0)
    throw invalid(what, `${field}.size is not a size`);
  const annotations = stringMap(v['annotations'], what, `${field}.annotations`);
  const platform = platformOf(v['platform'], what);
  return {
    mediaType,
    digest,
    size,
    ...(annotations !== undefined && { annotations }),
    ...(platform !== undefined && { platform }),
    ...(typeof artifactType === 'string' && { artifactType }),
  };
}

/** Parse JSON bytes; garbage becomes MOLT_MANIFEST_INVALID naming `what`. */
export function parseJson(
  bytes: Uint8Array,
  what: string,
  code: ErrorCode = ErrorCode.ManifestInvalid,
): unknown {
  try {
    return JSON.parse(Buffer.from(bytes).toString('utf8')) as unknown;
  } catch (e) {
    throw new MoltError(code, `${what} is not JSON`, {
      cause: e,
      hint: 'the registry returned something other than what the API promises',
    });
  }
}

/** Validate an image manifest body. */
export function parseImageManifest(json: unknown, what: string): ImageManifest {
  if (!isObject(json)) throw invalid(what, 'not a JSON object');
  if (!Array.isArray(json['layers'])) throw invalid(what, 'layers is not a list');
  const layers = json['layers'].map((l, i) => parseDescriptor(l, what, `layers[${i}]`));
  const subject =
    json['subject'] === undefined ? undefined : parseDescriptor(json['subject'], what, 'subject');
  const artifactType = json['artifactType'];
  return {
    config: parseDescriptor(json['config'], what, 'config'),
    layers,
    annotations: stringMap(json['annotations'], what, 'annotations') ?? {},
    ...(subject !== undefined && { subject }),
    ...(typeof artifactType === 'string' && { artifactType }),
  };
}

/** Validate an index / manifest list body. */
export function parseIndex(json: unknown, what: string): ImageIndex {
  if (!isObject(json)) throw invalid(what, 'not a JSON object');
  if (!Array.isArray(json['manifests'])) throw invalid(what, 'manifests is not a list');
  return {
    manifests: json['manifests'].map((m, i) => parseDescriptor(m, what, `manifests[${i}]`)),
    annotations: stringMap(json['annotations'], what, 'annotations') ?? {},
  };
}

/** Check that a body's own `mediaType`, when present, agrees with the `Content-Type` it came with. */
export function checkBodyMediaType(json: unknown, contentType: string, what: string): void {
  const declared = isObject(json) ? json['mediaType'] : undefined;
  if (declared !== undefined && declared !== contentType) {
    throw new MoltError(
      ErrorCode.ManifestInvalid,
      `${what}: the registry sent Content-Type ${contentType} but the manifest says mediaType ${JSON.stringify(declared)}`,
      {
        hint: 'the registry or a proxy mislabels content; molt refuses ambiguous manifests',
      },
    );
  }
}

/** `os/arch[/variant]`, for messages. */
export function formatPlatform(p: Platform): string {
  return [p.os, p.architecture, p.variant].filter((x) => x !== undefined && x !== '').join('/');
}

/** arm64 images often say `v8` where users say nothing; treat the two alike. */
function variantMatches(wanted: Platform, have: Platform): boolean {
  const norm = (p: Platform): string =>
    p.architecture === 'arm64' && p.variant === 'v8' ? '' : (p.variant ?? '');
  return wanted.variant === undefined ? true : norm(wanted) === norm(have);
}

/**
 * Pick the index entry for `wanted`: same os and architecture, and variant when asked for.
 * Among several candidates the one without a variant (or the first) wins, like containerd.
 */
export function selectPlatform(index: ImageIndex, wanted: Platform, what: string): Descriptor {
  const candidates = index.manifests.filter(
    (m) =>
      m.platform !== undefined &&
      isImageManifestType(m.mediaType) &&
      m.platform.os === wanted.os &&
      m.platform.architecture === wanted.architecture &&
      variantMatches(wanted, m.platform),
  );
  const chosen = candidates.find((m) => m.platform?.variant === undefined) ?? candidates[0];
  if (chosen !== undefined) return chosen;
  const available = index.manifests.flatMap((m) =>
    m.platform === undefined ? [] : [formatPlatform(m.platform)],
  );
  throw new MoltError(
    ErrorCode.PlatformNotFound,
    `${what} has no image for ${formatPlatform(wanted)} (it has: ${available.join(', ') || 'no platforms'})`,
    {
      hint: 'pick one of the listed platforms with --platform',
    },
  );
}
