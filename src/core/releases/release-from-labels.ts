// SPDX-License-Identifier: Apache-2.0
/**
 * Builds a {@link Release} from what discovery read for one digest: the tags pointing at it, the
 * image config labels ({@link ReleaseLabel}) and the signature verdict. A digest with bad metadata
 * is skipped with a code and a reason — never fatal for discovery, and never half-read: a release
 * whose Kubernetes range cannot be parsed must not become "compatible with everything".
 */
import { valid, validRange } from 'semver';
import { ErrorCode } from '../errors.ts';
import { isKubeVersion } from '../kubernetes/version.ts';
import { parseChannelList } from './channel.ts';
import { bySpecificity, compareVersions } from './order.ts';
import { ReleaseLabel } from './release.ts';
import type { Release, SignatureState, SkippedTag } from './release.ts';
import { parseTag, partitionTags, TagTier } from './tag.ts';
import type { TagVersion } from './tag.ts';

/** What discovery knows about one digest. */
export interface ReleaseInput {
  readonly digest: string;
  /** Every tag pointing at the digest; tags outside the scheme are ignored here. */
  readonly tags: readonly string[];
  /** `config.Labels` of the image (or the manifest annotations); `undefined` when absent. */
  readonly labels: Readonly<Record<string, string>> | undefined;
  readonly signature: SignatureState;
  /** The config's `created` field, used when the `created` label is absent. */
  readonly created?: string | undefined;
}

/** A release, or the reason its digest is skipped (`skipped.digest` is set). */
export type ReleaseOutcome =
  | { readonly ok: true; readonly release: Release }
  | { readonly ok: false; readonly skipped: SkippedTag };

/**
 * Reads one digest's release. Rules:
 * - ordering key and {@link Release.tag}: the most specific parseable tag (long, intermediate,
 *   short); {@link Release.tags} lists the parseable tags most specific first;
 * - `version`: the version label, or that tag; a label outside the scheme or disagreeing with the
 *   tag (different app, or a different revision when the label names one) skips the digest with
 *   `MOLT_INVALID_VERSION`, since the list would show one version and selection use another;
 * - `channels`: see {@link parseChannelList}; an invalid name skips with `MOLT_INVALID_CHANNEL`;
 * - `official`: only the exact text `true`;
 * - `kubernetes`, `upgradeFrom`: semver ranges (`semver.validRange`); empty = absent; an invalid
 *   range skips with `MOLT_INVALID_RANGE`;
 * - `kubelet`: a Kubernetes version (`v1.35.4`); anything else skips with `MOLT_INVALID_VERSION`,
 *   as every agent would refuse the release;
 * - `created`: informational, passed through (may be missing or 1970).
 */
export function releaseFromLabels(input: ReleaseInput): ReleaseOutcome {
  const tags = [...partitionTags(input.tags).versions].sort(bySpecificity);
  const best = tags[0];
  if (best === undefined) {
    const tag = input.tags[0] ?? input.digest;
    return skipped(input.digest, tag, ErrorCode.InvalidTag, 'no tag of this digest is a version');
  }
  const problem = checkLabels(input.labels, best);
  if (problem !== undefined) return skipped(input.digest, best.tag, problem.code, problem.reason);
  const label = (key: string): string | undefined => readLabel(input.labels, key);
  const carries = label(ReleaseLabel.KubernetesVersion);
  const kubelet = label(ReleaseLabel.KubeletVersion);
  return {
    ok: true,
    release: {
      digest: input.digest,
      tag: best.tag,
      tags: tags.map((t) => t.tag),
      version: label(ReleaseLabel.Version) ?? best.tag,
      channels: parseChannelList(label(ReleaseLabel.Channels)).channels,
      official: input.labels?.[ReleaseLabel.Official] === 'true',
      created: label(ReleaseLabel.Created) ?? nonEmpty(input.created),
      kubernetes: label(ReleaseLabel.Kubernetes),
      ...(carries !== undefined && { kubernetesVersion: carries }),
      ...(kubelet !== undefined && { kubelet }),
      upgradeFrom: label(ReleaseLabel.UpgradeFrom),
      signature: input.signature,
    },
  };
}

interface Problem {
  readonly code: ErrorCode;
  readonly reason: string;
}

function checkLabels(
  labels: Readonly<Record<string, string>> | undefined,
  best: TagVersion,
): Problem | undefined {
  const version = readLabel(labels, ReleaseLabel.Version);
  const invalid = parseChannelList(readLabel(labels, ReleaseLabel.Channels)).invalid;
  if (invalid.length > 0) {
    const names = invalid.map((c) => `"${c}"`).join(', ');
    return {
      code: ErrorCode.InvalidChannel,
      reason: `label ${ReleaseLabel.Channels}: invalid channel ${names}`,
    };
  }
  return (
    (version === undefined ? undefined : checkVersion(version, best)) ??
    checkRange(labels, ReleaseLabel.Kubernetes) ??
    checkRange(labels, ReleaseLabel.UpgradeFrom) ??
    checkKubernetesVersion(labels) ??
    checkKubelet(labels)
  );
}

function checkVersion(label: string, best: TagVersion): Problem | undefined {
  const where = `label ${ReleaseLabel.Version} "${label}"`;
  const parsed = parseTag(label);
  if (!parsed.ok) {
    return {
      code: ErrorCode.InvalidVersion,
      reason: `${where} is not a version: ${parsed.skipped.reason}`,
    };
  }
  const v = parsed.version;
  const agrees = v.tier === TagTier.Short ? v.app === best.app : compareVersions(v, best) === 0;
  if (agrees) return undefined;
  return { code: ErrorCode.InvalidVersion, reason: `${where} disagrees with tag "${best.tag}"` };
}

function checkRange(
  labels: Readonly<Record<string, string>> | undefined,
  key: string,
): Problem | undefined {
  const range = readLabel(labels, key);
  if (range === undefined || validRange(range) !== null) return undefined;
  return { code: ErrorCode.InvalidRange, reason: `label ${key} "${range}" is not a semver range` };
}

/** `dev.molt.kubernetes.version` is a Kubernetes version, `v` and semver (`v1.35.0`). */
function checkKubernetesVersion(
  labels: Readonly<Record<string, string>> | undefined,
): Problem | undefined {
  const v = readLabel(labels, ReleaseLabel.KubernetesVersion);
  if (v === undefined || (v.startsWith('v') && valid(v.slice(1)) !== null)) return undefined;
  return {
    code: ErrorCode.InvalidVersion,
    reason: `label ${ReleaseLabel.KubernetesVersion} "${v}" is not a Kubernetes version like v1.35.0`,
  };
}

/** `molt.dev/kubelet-version` is a Kubernetes version (`v1.35.4`): the skew check reads it. */
function checkKubelet(labels: Readonly<Record<string, string>> | undefined): Problem | undefined {
  const v = readLabel(labels, ReleaseLabel.KubeletVersion);
  if (v === undefined || isKubeVersion(v)) return undefined;
  return {
    code: ErrorCode.InvalidVersion,
    reason: `label ${ReleaseLabel.KubeletVersion} "${v}" is not a Kubernetes version like v1.35.4`,
  };
}

function readLabel(
  labels: Readonly<Record<string, string>> | undefined,
  key: string,
): string | undefined {
  return nonEmpty(labels?.[key]);
}

function nonEmpty(s: string | undefined): string | undefined {
  const t = s?.trim();
  return t === '' ? undefined : t;
}

function skipped(digest: string, tag: string, code: ErrorCode, reason: string): ReleaseOutcome {
  return { ok: false, skipped: { tag, digest, code, reason } };
}
