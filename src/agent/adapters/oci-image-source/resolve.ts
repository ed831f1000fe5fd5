// SPDX-License-Identifier: Apache-2.0
/**
 * Everything a pull learns before it writes a byte: the platform manifest, the config labels, the
 * contract check of every descriptor, and (with a key) the signature verdict.
 */
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { planInstallerImage, type ArtifactPlan } from '../../../core/slots/contract.ts';
import { referenceTarget, type ImageReference } from '../../../core/slots/reference.ts';
import type { OciRegistryClient, Platform, ResolvedImage } from '../../../oci/index.ts';
import { checkSignature } from '../../../releases/index.ts';

export interface ResolvedInstaller {
  readonly resolved: ResolvedImage;
  readonly plan: ArtifactPlan;
  /** The image config's string labels (the release's metadata: its kubelet, …). */
  readonly labels: Readonly<Record<string, string>>;
}

export interface ResolveOptions {
  readonly platform: Platform;
  readonly maxBytes: number;
  readonly publicKeyPem: string | undefined;
}

function labelsOf(bytes: Uint8Array, what: string): Record<string, string> {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (e) {
    throw new MoltError(ErrorCode.ImageInvalid, `${what}: the image config is not UTF-8 JSON`, {
      cause: e,
    });
  }
  const labels: unknown = (json as { config?: { Labels?: unknown } } | null)?.config?.Labels ?? {};
  if (typeof labels !== 'object' || labels === null)
    throw new MoltError(ErrorCode.ImageInvalid, `${what}: config.Labels is not an object`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(labels)) if (typeof v === 'string') out[k] = v;
  return out;
}

async function verifySignature(
  client: OciRegistryClient,
  ref: ImageReference,
  digest: string,
  publicKeyPem: string,
): Promise<void> {
  const verdict = await checkSignature({
    reader: client,
    repository: ref.repository,
    digest,
    publicKeyPem,
  });
  if (verdict.status === 'verified') return;
  const what = `${ref.registry}/${ref.repository}@${digest}`;
  if (verdict.status === 'unsigned')
    throw new MoltError(
      ErrorCode.SignatureMissing,
      `${what} has no signature, and this agent requires one`,
      {
        hint: 'sign the installer image (molt dev publish --sign-key) or configure the agent without a public key',
      },
    );
  throw new MoltError(
    ErrorCode.SignatureInvalid,
    `${what}: ${'reason' in verdict ? verdict.reason : 'the signature was not checked'}`,
    {
      hint: 'the image was not signed with the key this agent trusts',
    },
  );
}

/** Resolve `ref` and check the contract (and signature) from descriptors and labels only. */
export async function resolveInstaller(
  client: OciRegistryClient,
  ref: ImageReference,
  o: ResolveOptions,
): Promise<ResolvedInstaller> {
  const resolved = await client.resolveImage(ref.repository, referenceTarget(ref), o.platform);
  const what = `${ref.registry}/${ref.repository}@${resolved.manifestDigest}`;
  const labels = labelsOf(await client.getBlob(ref.repository, resolved.config.digest), what);
  const plan = planInstallerImage({ layers: resolved.layers, labels, maxBytes: o.maxBytes });
  if (o.publicKeyPem !== undefined)
    await verifySignature(client, ref, resolved.digest, o.publicKeyPem);
  return { resolved, plan, labels };
}
