// SPDX-License-Identifier: Apache-2.0
import { ErrorCode, MoltError } from '../core/errors.ts';
import { ReleaseLabel } from '../core/releases/release.ts';
import {
  buildImage,
  isTag,
  pushImage,
  type LayerInput,
  type Platform,
  type RegistryClient,
} from '../oci/index.ts';
import {
  attachBundle,
  attachLegacySignature,
  createBundle,
  signLegacy,
} from './signatures/index.ts';

/** The release metadata a publisher declares; written as config labels (docs/adr/0002). */
export interface ReleaseLabels {
  readonly version?: string;
  readonly channels?: readonly string[];
  readonly official?: boolean;
  readonly kubernetes?: string;
  readonly upgradeFrom?: string;
  readonly created?: string;
  /** Any other labels, written as given (tests use this to publish deliberately broken releases). */
  readonly extra?: Readonly<Record<string, string>>;
}

/** How to sign a published release. */
export interface PublishSigning {
  readonly privateKeyPem: string;
  readonly format: 'cosign-legacy' | 'sigstore-bundle';
  /** `registry/repository` as written into the signed payload. */
  readonly reference: string;
}

/** Input of {@link publishRelease}. */
export interface PublishOptions {
  readonly client: RegistryClient;
  readonly repository: string;
  /** Tags to push, at least one; the first is the primary. */
  readonly tags: readonly string[];
  readonly labels: ReleaseLabels;
  readonly layers?: readonly LayerInput[];
  readonly platform?: Platform;
  readonly signing?: PublishSigning;
}

/** What was published. */
export interface Published {
  readonly digest: string;
  readonly tags: readonly string[];
  readonly signature: string | null;
}

/** The config labels for `labels`, in a stable order. */
export function releaseLabels(labels: ReleaseLabels): Record<string, string> {
  const out: Record<string, string> = {};
  if (labels.version !== undefined) out[ReleaseLabel.Version] = labels.version;
  if (labels.channels !== undefined) out[ReleaseLabel.Channels] = labels.channels.join(',');
  if (labels.official !== undefined) out[ReleaseLabel.Official] = String(labels.official);
  if (labels.kubernetes !== undefined) out[ReleaseLabel.Kubernetes] = labels.kubernetes;
  if (labels.upgradeFrom !== undefined) out[ReleaseLabel.UpgradeFrom] = labels.upgradeFrom;
  if (labels.created !== undefined) out[ReleaseLabel.Created] = labels.created;
  return { ...out, ...labels.extra };
}

/**
 * Build an installer image with release labels, push it under every tag, and optionally sign it.
 * Tags are checked before anything is pushed, so a bad tag never leaves a half-published release.
 */
export async function publishRelease(o: PublishOptions): Promise<Published> {
  if (o.tags.length === 0)
    throw new MoltError(ErrorCode.BadInput, 'give at least one tag to publish');
  const bad = o.tags.find((t) => !isTag(t));
  if (bad !== undefined) {
    throw new MoltError(ErrorCode.InvalidTag, `"${bad}" is not a valid OCI tag`, {
      hint: 'tags are [A-Za-z0-9_][A-Za-z0-9._-]{0,127}; "+" is not allowed',
    });
  }
  const image = buildImage({
    labels: releaseLabels(o.labels),
    layers: o.layers ?? [],
    ...(o.labels.created !== undefined && { created: o.labels.created }),
    ...(o.platform !== undefined && { platform: o.platform }),
  });
  const digest = await pushImage(o.client, o.repository, o.tags, image);
  const signature =
    o.signing === undefined
      ? null
      : await sign(o, o.signing, { digest, image: image.manifest.descriptor });
  return { digest, tags: [...o.tags], signature };
}

async function sign(
  o: PublishOptions,
  s: PublishSigning,
  subject: { digest: string; image: { mediaType: string; digest: string; size: number } },
): Promise<string> {
  if (s.format === 'cosign-legacy') {
    const signature = signLegacy({
      privateKeyPem: s.privateKeyPem,
      digest: subject.digest,
      reference: s.reference,
    });
    return attachLegacySignature({
      client: o.client,
      repository: o.repository,
      digest: subject.digest,
      signature,
    });
  }
  const bundleJson = createBundle({ privateKeyPem: s.privateKeyPem, digest: subject.digest });
  return attachBundle({
    client: o.client,
    repository: o.repository,
    bundleJson,
    subject: subject.image,
  });
}
