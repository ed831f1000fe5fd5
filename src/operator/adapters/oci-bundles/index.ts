// SPDX-License-Identifier: Apache-2.0
/**
 * {@link BundleResolver} over molt's OCI client (docs/adr/0012 §2): `HEAD <repository>:<version>`
 * in the operator's registry, answered as `host/repository@sha256:…` (the agents pull by digest,
 * so what was checked is what runs). A missing tag is undefined; a registry that cannot be asked
 * throws its own code (`MOLT_REGISTRY_*`), which fails the check rather than passing it.
 *
 * With the operator's release key (`publicKey`), a bundle is held to the policy of OS releases:
 * its digest must carry a signature that verifies with that key, or the resolution throws
 * MOLT_SIGNATURE_MISSING / MOLT_SIGNATURE_INVALID — so no plan names it and no agent is asked to
 * pre-pull it; `verify` checks a recorded plan's bundle again before each pre-pull. The agent
 * pulls that very digest, and checks it again with its own key when it has one.
 */
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { parseImageReference } from '../../../core/slots/reference.ts';
import { createRegistryClient, type RegistryReader } from '../../../oci/index.ts';
import { checkSignature } from '../../../releases/index.ts';
import type { BundleResolver } from '../../ports/kube-health.ts';

export interface OciBundleOptions {
  readonly registry: string;
  readonly insecure?: boolean;
  /** PEM key releases must be signed with: when set, bundles must be signed with it too. */
  readonly publicKeyPem?: string;
}

async function requireSigned(
  reader: RegistryReader,
  bundle: { repository: string; digest: string; name: string },
  publicKeyPem: string,
): Promise<void> {
  const { repository, digest } = bundle;
  const verdict = await checkSignature({ reader, repository, digest, publicKeyPem });
  if (verdict.status === 'verified') return;
  if (verdict.status === 'unsigned')
    throw new MoltError(
      ErrorCode.SignatureMissing,
      `Kubernetes bundle ${bundle.name} (${bundle.digest}) has no signature, and this operator requires signed releases`,
      {
        hint: 'sign the bundle with the release key (cosign sign --key …), as the OS releases are',
      },
    );
  throw new MoltError(
    ErrorCode.SignatureInvalid,
    `Kubernetes bundle ${bundle.name} (${bundle.digest}): ${'reason' in verdict ? verdict.reason : 'the signature does not verify'}`,
    { hint: 'the bundle was not signed with the key this operator trusts for releases' },
  );
}

/** `bundle`'s repository and digest, when it is a reference by digest into `host`. */
function inRegistry(bundle: string, host: string): { repository: string; digest: string } {
  const ref = parseImageReference(bundle);
  if (ref.registry !== host || ref.digest === undefined)
    throw new MoltError(
      ErrorCode.KubeBundleRepositoryRefused,
      `Kubernetes bundle ${bundle} is not a reference by digest into this operator's registry ${host}`,
      { hint: 'make the plan again: its bundles are resolved in the operator’s registry' },
    );
  return { repository: ref.repository, digest: ref.digest };
}

export function createOciBundleResolver(o: OciBundleOptions): BundleResolver {
  const host = o.registry.replace(/^https?:\/\//, '').replace(/\/$/, '');
  const withReader = async <T>(use: (reader: RegistryReader) => Promise<T>): Promise<T> => {
    const reader = createRegistryClient({ registry: o.registry, insecure: o.insecure === true });
    try {
      return await use(reader);
    } finally {
      await reader.close();
    }
  };
  return {
    resolve: (repository, version) =>
      withReader(async (reader) => {
        const d = await reader.headManifest(repository, version);
        if (d === undefined) return undefined;
        if (o.publicKeyPem !== undefined) {
          const name = `${repository}:${version}`;
          await requireSigned(reader, { repository, digest: d.digest, name }, o.publicKeyPem);
        }
        return `${host}/${repository}@${d.digest}`;
      }),
    async verify(bundle) {
      const { repository, digest } = inRegistry(bundle, host);
      const key = o.publicKeyPem;
      if (key === undefined) return;
      await withReader((reader) =>
        requireSigned(reader, { repository, digest, name: repository }, key),
      );
    },
  };
}
