// SPDX-License-Identifier: Apache-2.0
/** One bundle's pull into a staging directory (see index.ts): manifest, checks, binaries. */
import { statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { planBundle, type BundlePlan } from '../../../core/kubernetes/bundle.ts';
import type { OciRegistryClient } from '../../../oci/index.ts';
import { checkSignature } from '../../../releases/index.ts';
import { registryClientFor } from '../oci-image-source/client.ts';
import { writeBlobToFile } from '../oci-image-source/write-file.ts';
import type { OciKubeBundlesOptions } from './options.ts';

export interface PullInput extends OciKubeBundlesOptions {
  readonly parts: {
    readonly registry: string;
    readonly repository: string;
    readonly digest: string;
  };
  readonly bundle: string;
  /** The staging directory the binaries are written to. */
  readonly dir: string;
  readonly version: string | undefined;
}

async function verifySignature(
  client: OciRegistryClient,
  i: PullInput,
  key: string,
): Promise<void> {
  const verdict = await checkSignature({
    reader: client,
    repository: i.parts.repository,
    digest: i.parts.digest,
    publicKeyPem: key,
  });
  if (verdict.status === 'verified') return;
  if (verdict.status === 'unsigned')
    throw new MoltError(
      ErrorCode.SignatureMissing,
      `${i.bundle} has no signature, and this machine requires one`,
      { hint: 'sign the bundle (cosign sign --key …) or configure the agent without a public key' },
    );
  throw new MoltError(
    ErrorCode.SignatureInvalid,
    `${i.bundle}: ${'reason' in verdict ? verdict.reason : 'the signature was not checked'}`,
    { hint: 'the bundle was not signed with the key this machine trusts' },
  );
}

const MiB = 1024 * 1024;

/**
 * Refuse, before writing anything, a bundle the filesystem cannot hold: written until it is full,
 * it would leave STATE — the machine's config, PKI and journal — with no room at all.
 */
async function checkRoom(i: PullInput, plan: BundlePlan): Promise<void> {
  const need = plan.binaries.reduce((sum, b) => sum + b.size, 0);
  const fs = await statfs(i.dir);
  const free = fs.bavail * fs.bsize;
  // A margin for the filesystem's own blocks and the files written beside the binaries.
  if (need + 4 * MiB <= free) return;
  const mib = (n: number): string => String(Math.ceil(n / MiB));
  throw new MoltError(
    ErrorCode.NoSpace,
    `${i.bundle} needs ${mib(need)} MiB and the filesystem it goes to (${i.dir}) has ${mib(free)} MiB free`,
    {
      hint: 'a control plane keeps its Kubernetes bundles on STATE, the running one and the next: install control planes with a larger STATE (`molt install --state-size 1G`)',
    },
  );
}

/** Fetch, check and write the bundle's binaries into `i.dir`; resolves with what was written. */
export async function pullBundle(i: PullInput): Promise<BundlePlan> {
  const client = registryClientFor(
    {
      root: i.root,
      ...(i.registry && { registry: i.registry }),
      ...(i.mirrors && { mirrors: i.mirrors }),
    },
    i.parts.registry,
  );
  try {
    const manifest = await client.getManifest(i.parts.repository, i.parts.digest);
    const plan = planBundle(manifest.json, {
      maxBytes: i.maxBytes,
      what: i.bundle,
      ...(i.version !== undefined && { version: i.version }),
    });
    if (i.publicKeyPem !== undefined) await verifySignature(client, i, i.publicKeyPem);
    await checkRoom(i, plan);
    for (const b of plan.binaries)
      await writeBlobToFile(
        (sink) => client.streamBlobTo(i.parts.repository, b.digest, sink),
        join(i.dir, b.name),
        { limit: b.size, onBytes: () => undefined },
      );
    return plan;
  } finally {
    await client.close();
  }
}
