// SPDX-License-Identifier: Apache-2.0
/**
 * The Kubernetes bundle (docs/adr/0012 §2): the control-plane binaries of one Kubernetes version as
 * one OCI artifact — an image manifest with `artifactType` {@link KubeBundleFormat.artifactType},
 * the empty config, one UNCOMPRESSED layer per binary (the executable's bytes, titled by its name)
 * and the version as a manifest annotation. Uncompressed, so a layer's digest is the digest of the
 * file the agent runs, and staging is one verified stream per binary with nothing to unpack.
 *
 * Both sides live here: {@link bundleManifest} builds the manifest `molt dev publish-kubernetes`
 * pushes, {@link planBundle} checks one before the agent fetches a byte of it.
 */
import { ErrorCode, MoltError } from '../errors.ts';

export const KubeBundleFormat = {
  artifactType: 'application/vnd.molt.kubernetes.bundle.v1',
  /** A layer that is one executable, byte for byte. */
  binaryMediaType: 'application/vnd.molt.kubernetes.binary.v1',
  versionAnnotation: 'dev.molt.kubernetes.version',
  titleAnnotation: 'org.opencontainers.image.title',
  manifestMediaType: 'application/vnd.oci.image.manifest.v1+json',
  /** The config of an OCI 1.1 artifact: `{}`. */
  emptyConfig: {
    mediaType: 'application/vnd.oci.empty.v1+json',
    digest: 'sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a',
    size: 2,
  },
} as const;

/** The binaries a bundle may carry; the first three it must. */
export const BundleBinaryNames = [
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kubectl',
  'kubelet',
] as const;
export type BundleBinaryName = (typeof BundleBinaryNames)[number];
const required: readonly BundleBinaryName[] = [
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
];

/** One binary of a bundle: its layer. */
export interface BundleBinary {
  readonly name: BundleBinaryName;
  readonly digest: string;
  readonly size: number;
}

/** What a checked bundle holds. */
export interface BundlePlan {
  readonly version: string;
  readonly binaries: readonly BundleBinary[];
  readonly totalBytes: number;
}

const versionPattern = /^v1\.\d{1,3}\.\d{1,3}$/;
const digestPattern = /^sha256:[0-9a-f]{64}$/;

const isBinaryName = (n: unknown): n is BundleBinaryName =>
  typeof n === 'string' && (BundleBinaryNames as readonly string[]).includes(n);

/** The manifest of a bundle of `binaries` (layers in the order given). */
export function bundleManifest(version: string, binaries: readonly BundleBinary[]): object {
  const f = KubeBundleFormat;
  return {
    schemaVersion: 2,
    mediaType: f.manifestMediaType,
    artifactType: f.artifactType,
    config: f.emptyConfig,
    layers: binaries.map((b) => ({
      mediaType: f.binaryMediaType,
      digest: b.digest,
      size: b.size,
      annotations: { [f.titleAnnotation]: b.name },
    })),
    annotations: { [f.versionAnnotation]: version },
  };
}

type Json = Readonly<Record<string, unknown>>;
const isObject = (v: unknown): v is Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function invalid(what: string, problem: string): MoltError {
  return new MoltError(
    ErrorCode.KubeBundleInvalid,
    `${what} is not a Kubernetes bundle: ${problem}`,
    {
      hint: 'publish bundles with `molt dev publish-kubernetes` (docs/kubernetes.md)',
    },
  );
}

function layerOf(v: unknown, i: number, what: string): BundleBinary {
  const f = KubeBundleFormat;
  if (!isObject(v)) throw invalid(what, `layer ${i} is not an object`);
  if (v['mediaType'] !== f.binaryMediaType)
    throw invalid(
      what,
      `layer ${i} has media type ${String(v['mediaType'])}, not ${f.binaryMediaType}`,
    );
  const { digest, size } = v;
  if (typeof digest !== 'string' || !digestPattern.test(digest))
    throw invalid(what, `layer ${i} has no sha256 digest`);
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size <= 0)
    throw invalid(what, `layer ${i} has no size`);
  const annotations = v['annotations'];
  const name = isObject(annotations) ? annotations[f.titleAnnotation] : undefined;
  if (!isBinaryName(name))
    throw invalid(
      what,
      `layer ${i} is titled ${JSON.stringify(name)}, not one of ${BundleBinaryNames.join(', ')}`,
    );
  return { name, digest, size };
}

function versionOf(json: Json, expected: string | undefined, what: string): string {
  const f = KubeBundleFormat;
  const annotations = json['annotations'];
  const version = isObject(annotations) ? annotations[f.versionAnnotation] : undefined;
  if (typeof version !== 'string' || !versionPattern.test(version))
    throw invalid(what, `the annotation ${f.versionAnnotation} is not a Kubernetes version`);
  if (expected !== undefined && version !== expected)
    throw invalid(what, `it holds Kubernetes ${version}, not ${expected} as asked`);
  return version;
}

/**
 * Check a bundle's manifest (already digest-verified JSON): media types, the artifact type, the
 * version annotation (equal to `version` when given), one layer per known binary with the three
 * control-plane binaries present, and the sum of the layers within `maxBytes`.
 * @throws MoltError `MOLT_KUBE_BUNDLE_INVALID`
 */
export function planBundle(
  json: unknown,
  o: { readonly maxBytes: number; readonly version?: string; readonly what: string },
): BundlePlan {
  const f = KubeBundleFormat;
  if (!isObject(json)) throw invalid(o.what, 'the manifest is not a JSON object');
  if (json['mediaType'] !== f.manifestMediaType)
    throw invalid(
      o.what,
      `the manifest is a ${String(json['mediaType'])}, not an OCI image manifest`,
    );
  if (json['artifactType'] !== f.artifactType)
    throw invalid(
      o.what,
      `its artifactType is ${String(json['artifactType'])}, not ${f.artifactType}`,
    );
  const version = versionOf(json, o.version, o.what);
  const layers = json['layers'];
  if (!Array.isArray(layers)) throw invalid(o.what, 'it has no layer list');
  const binaries = layers.map((l, i) => layerOf(l, i, o.what));
  const names = binaries.map((b) => b.name);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice !== undefined) throw invalid(o.what, `it carries ${twice} twice`);
  const missing = required.filter((n) => !names.includes(n));
  if (missing.length > 0) throw invalid(o.what, `it carries no ${missing.join(', ')}`);
  const totalBytes = binaries.reduce((sum, b) => sum + b.size, 0);
  if (totalBytes > o.maxBytes)
    throw new MoltError(
      ErrorCode.KubeBundleInvalid,
      `${o.what} is ${String(totalBytes)} bytes, over the ${String(o.maxBytes)}-byte limit of this machine`,
      { hint: 'raise controlPlane.maxBundleBytes in the machine config if the bundle is right' },
    );
  return { version, binaries, totalBytes };
}
