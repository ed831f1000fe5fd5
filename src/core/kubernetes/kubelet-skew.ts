// SPDX-License-Identifier: Apache-2.0
/**
 * Whether a node may run a kubelet against the cluster's API server, by Kubernetes' version skew
 * policy (kubernetes.io/releases/version-skew-policy): the kubelet must not be newer than
 * kube-apiserver (by minor; any patch of the same minor is fine), and may be up to three minors
 * older — two for a kubelet older than 1.25. An OS release carries its kubelet
 * (`molt.dev/kubelet-version`), so an upgrade to a release outside this range would boot a node
 * the API server does not support; the agent refuses it before it writes or cordons anything.
 *
 * An API server that emulates an older minor (`--emulated-version`, KEP-4330) is judged by that
 * minor: its interoperability with other components is defined in terms of the emulated version,
 * so a kubelet of the binary's new minor is still newer than what it serves until finalized.
 */
import { ErrorCode } from '../errors.ts';
import { parseKubeMinor, parseKubeVersion, type KubeVersionParts } from './version.ts';

/** The API server as `GET /version` reports it. */
export interface ApiServerVersion {
  /** `gitVersion`, e.g. `v1.36.3`. */
  readonly version: string;
  /** `emulationMajor.emulationMinor` when it emulates another minor, e.g. `1.35`. */
  readonly emulatedVersion?: string;
}

export type KubeletSkewVerdict =
  | { readonly ok: true }
  | {
      readonly ok: false;
      readonly code: typeof ErrorCode.KubeletSkew;
      readonly reason: string;
      readonly hint: string;
    };

/** How many minors older than kube-apiserver a kubelet may be (three since 1.25). */
export const KUBELET_MAX_MINORS_OLDER = 3;
/** Kubelets older than this minor may only be two minors older. */
const THREE_MINOR_SKEW_SINCE = 25;

const minor = (p: KubeVersionParts): string => `${String(p.major)}.${String(p.minor)}`;

/** The minor the API server serves: its emulated one, else its binary's. */
function servedMinor(api: ApiServerVersion): KubeVersionParts {
  const binary = parseKubeVersion(api.version);
  if (api.emulatedVersion === undefined) return binary;
  const emulated = parseKubeMinor(api.emulatedVersion);
  return emulated.major === binary.major && emulated.minor < binary.minor ? emulated : binary;
}

/** The oldest kubelet minor the policy allows against minor `served`. */
function oldestAllowed(served: KubeVersionParts): number {
  const three = served.minor - KUBELET_MAX_MINORS_OLDER;
  return three >= THREE_MINOR_SKEW_SINCE ? three : served.minor - 2;
}

/**
 * The policy's verdict on running kubelet `kubelet` (`v1.35.4`) against `api`. Throws
 * `MOLT_INVALID_VERSION` for a version that is not one.
 */
export function checkKubeletSkew(kubelet: string, api: ApiServerVersion): KubeletSkewVerdict {
  const k = parseKubeVersion(kubelet);
  const served = servedMinor(api);
  const oldest = oldestAllowed(served);
  if (k.major === served.major && k.minor <= served.minor && k.minor >= oldest) return { ok: true };
  const server =
    minor(served) === minor(parseKubeVersion(api.version))
      ? `the API server ${api.version}`
      : `the API server ${api.version} (emulating ${minor(served)})`;
  const range = `${String(served.major)}.${String(Math.max(oldest, 0))} to ${minor(served)}`;
  const newer = k.major > served.major || (k.major === served.major && k.minor > served.minor);
  const relation = newer ? 'is newer than' : 'is too old for';
  return {
    ok: false,
    code: ErrorCode.KubeletSkew,
    reason: `kubelet ${kubelet} ${relation} ${server}: the version skew policy allows kubelets ${range}`,
    hint: newer
      ? 'upgrade the control plane first (molt cluster kubernetes upgrade), then this release'
      : 'upgrade the nodes to a release with a newer kubelet first, one within the range',
  };
}
