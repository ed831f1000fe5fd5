// SPDX-License-Identifier: Apache-2.0
/**
 * Whether one release may be installed on a cluster, ignoring reachability (that is a property of
 * the whole set; see path.ts). Each failed check is a value with a stable code, so `molt releases
 * latest` can say why a newer release was not chosen.
 *
 * Pre-releases in range checks: `upgradeFrom` is tested with `includePrerelease: true`, because a
 * publisher writing `>=1.8.0` means "from 1.8.0 on" and a `1.9.0-beta.1` cluster is past 1.8.0;
 * plain semver would strand beta-channel clusters. The Kubernetes version is compared as
 * MAJOR.MINOR.PATCH only: vendor builds report `v1.30.1-eks-1234` or `v1.30.1-gke.100`, which semver
 * reads as pre-releases *below* 1.30.1 and would wrongly fail `>=1.30.1`.
 */
import { parse, Range } from 'semver';
import { ErrorCode, MoltError } from '../errors.ts';
import { checkKubeletSkew } from '../kubernetes/kubelet-skew.ts';
import { compareVersions } from './order.ts';
import type { Release } from './release.ts';
import type { TagVersion } from './tag.ts';

/** Why a release was not selected. PascalCase values are a stable contract (JSON output). */
export const RejectionCode = {
  /** Same version as the current one (only releases at or above the current version are listed). */
  NotNewer: 'NotNewer',
  NotInChannel: 'NotInChannel',
  Unofficial: 'Unofficial',
  KubernetesIncompatible: 'KubernetesIncompatible',
  /** Verification failed: rejected whether or not signatures are required. */
  SignatureInvalid: 'SignatureInvalid',
  /** No signature, and signatures are required. */
  Unsigned: 'Unsigned',
  /** Signatures are required but were not checked (no public key). */
  SignatureUnchecked: 'SignatureUnchecked',
  /** Eligible, but its `upgradeFrom` excludes the current version and no eligible release leads there. */
  NotReachable: 'NotReachable',
  /** Eligible and reachable, but a newer eligible release was selected. */
  Superseded: 'Superseded',
} as const;
/** One of {@link RejectionCode}. */
export type RejectionCode = (typeof RejectionCode)[keyof typeof RejectionCode];

/** What the cluster asks for, validated. */
export interface Criteria {
  /** Undefined: any channel, but at least one (a release in no channel is offered to no one). */
  readonly channel: string | undefined;
  readonly current: TagVersion | undefined;
  /** Cluster Kubernetes version as MAJOR.MINOR.PATCH; undefined = unknown, not checked. */
  readonly kubernetes: string | undefined;
  readonly requireSignature: boolean;
}

/** A failed check: code and a sentence for people. */
export interface Verdict {
  readonly code: RejectionCode;
  readonly reason: string;
}

/** Reads a cluster Kubernetes version (`v1.31.2`, `1.30.1-eks-1234`); throws `MOLT_INVALID_VERSION`. */
export function parseKubernetesVersion(input: string): string {
  const v = parse(input.trim());
  if (v !== null) return `${v.major}.${v.minor}.${v.patch}`;
  throw new MoltError(ErrorCode.InvalidVersion, `Kubernetes version "${input}" is not a version`, {
    hint: 'give the version the API server reports, for example v1.31.2',
  });
}

/** The first check `r` fails, in the order of {@link RejectionCode}; undefined when eligible. */
export function ineligibility(r: Release, version: TagVersion, c: Criteria): Verdict | undefined {
  if (c.current !== undefined && compareVersions(version, c.current) <= 0) {
    return { code: RejectionCode.NotNewer, reason: `not newer than the current ${c.current.tag}` };
  }
  const outside = channelVerdict(r, c.channel);
  if (outside !== undefined) return outside;
  if (!r.official) return { code: RejectionCode.Unofficial, reason: 'not marked official' };
  if (
    c.kubernetes !== undefined &&
    r.kubernetes !== undefined &&
    !testRange(r.kubernetes, c.kubernetes)
  ) {
    return {
      code: RejectionCode.KubernetesIncompatible,
      reason: `supports Kubernetes ${r.kubernetes}, the cluster runs ${c.kubernetes}`,
    };
  }
  // The agents refuse it too (MOLT_KUBELET_SKEW); here it is never offered, and says why.
  const skew =
    c.kubernetes === undefined || r.kubelet === undefined
      ? undefined
      : checkKubeletSkew(r.kubelet, { version: c.kubernetes });
  if (skew !== undefined && !skew.ok)
    return { code: RejectionCode.KubernetesIncompatible, reason: skew.reason };
  return signatureVerdict(r, c.requireSignature);
}

function channelVerdict(r: Release, channel: string | undefined): Verdict | undefined {
  if (channel === undefined ? r.channels.length > 0 : r.channels.includes(channel))
    return undefined;
  if (channel === undefined) return { code: RejectionCode.NotInChannel, reason: 'in no channel' };
  const list = r.channels.length === 0 ? 'no channel' : `channels ${r.channels.join(', ')}`;
  return { code: RejectionCode.NotInChannel, reason: `not in channel ${channel} (${list})` };
}

function signatureVerdict(r: Release, required: boolean): Verdict | undefined {
  const s = r.signature;
  switch (s.status) {
    case 'verified':
      return undefined;
    case 'invalid':
      return { code: RejectionCode.SignatureInvalid, reason: `signature invalid: ${s.reason}` };
    case 'unsigned':
      return required ? { code: RejectionCode.Unsigned, reason: 'not signed' } : undefined;
    case 'unchecked':
      return required
        ? {
            code: RejectionCode.SignatureUnchecked,
            reason: 'signature not checked (no public key)',
          }
        : undefined;
  }
}

function testRange(range: string, version: string): boolean {
  // An unparseable range admits nothing: releaseFromLabels rejects such labels, so this only
  // guards hand-built releases, and failing closed never installs something incompatible.
  return parseRange(range)?.test(version) ?? false;
}

/** A semver range with `includePrerelease` (see the module comment), or null when invalid. */
export function parseRange(range: string): Range | null {
  try {
    return new Range(range, { includePrerelease: true });
  } catch {
    return null;
  }
}
