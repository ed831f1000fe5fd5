// SPDX-License-Identifier: Apache-2.0
/**
 * The kubelet skew check of a pull (docs/adr/0015 §5): an OS release carries its kubelet
 * (`molt.dev/kubelet-version`), so upgrading to it upgrades the node's kubelet. A kubelet newer than
 * the cluster's API server, or older than the skew policy allows, would boot a node the API server
 * does not support; the check runs once the pull has resolved the image and before it writes
 * anything (the pull's `checkResolved`), so a refused release leaves the slots as they were and the
 * node uncordoned — the Pulling phase comes before every disruption.
 */
import { ErrorCode, MoltError, isMoltError } from '../../core/errors.ts';
import { checkKubeletSkew, type ApiServerVersion } from '../../core/kubernetes/kubelet-skew.ts';
import { ReleaseLabel } from '../../core/releases/release.ts';
import type { ResolvedImage } from '../ports/image-source.ts';
import type { KubeNode } from '../ports/kube-node.ts';

/**
 * Refuses `image` (MOLT_KUBELET_SKEW) when its kubelet is outside the skew the API server allows.
 * No check on a machine outside a cluster, or for a release that names no kubelet. An API server
 * out of reach fails the pull with MOLT_KUBE_UNAVAILABLE (the cordon would fail next anyway).
 */
export async function checkReleaseKubelet(
  kube: Pick<KubeNode, 'apiServer'>,
  image: ResolvedImage,
): Promise<void> {
  const kubelet = image.labels[ReleaseLabel.KubeletVersion];
  if (kubelet === undefined || kube.apiServer === undefined) return;
  const api: ApiServerVersion = await kube.apiServer();
  let verdict;
  try {
    verdict = checkKubeletSkew(kubelet, api);
  } catch (e) {
    if (!isMoltError(e, ErrorCode.InvalidVersion)) throw e;
    throw new MoltError(
      ErrorCode.ImageInvalid,
      `label ${ReleaseLabel.KubeletVersion} "${kubelet}" is not a Kubernetes version`,
      { hint: 'publish the release with a kubelet version such as v1.35.4', cause: e },
    );
  }
  if (verdict.ok) return;
  throw new MoltError(verdict.code, `release ${image.version}: ${verdict.reason}`, {
    hint: verdict.hint,
    details: { kubelet, apiServer: api.version },
  });
}
