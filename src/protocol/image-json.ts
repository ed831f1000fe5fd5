// SPDX-License-Identifier: Apache-2.0
/**
 * What publishers read from `image.json` (the summary `molt image build --out DIR` writes beside
 * the artifacts): the release labels an OS image with a node runtime implies (docs/adr/0015 §1).
 * The build records the kubelet and containerd it put in as `kubernetesNode`, and publishing
 * (`molt dev publish --dir`, the lab's VM releases) turns them into `molt.dev/kubelet-version` and
 * `molt.dev/containerd-version`, which the agent's skew check reads before an upgrade.
 */
import { z } from 'zod';
import { ErrorCode, MoltError } from '../core/errors.ts';
import { isKubeVersion } from '../core/kubernetes/version.ts';
import { ReleaseLabel } from '../core/releases/release.ts';

const NodeRuntime = z.object({
  kubelet: z.string().min(1),
  containerd: z.string().min(1),
});

/**
 * The labels for a parsed `image.json`: none without `kubernetesNode` (an image without a node
 * runtime, or one built before it existed). A `kubernetesNode` that names no kubelet version is
 * refused (`MOLT_BAD_INPUT`): published unlabelled, its release would skip the skew check.
 */
export function nodeRuntimeLabels(imageJson: unknown, what = 'image.json'): Record<string, string> {
  const node: unknown = (imageJson as { kubernetesNode?: unknown } | null)?.kubernetesNode;
  if (node === undefined || node === null) return {};
  const parsed = NodeRuntime.safeParse(node);
  if (!parsed.success || !isKubeVersion(parsed.data.kubelet))
    throw new MoltError(
      ErrorCode.BadInput,
      `${what}: kubernetesNode does not name its kubelet and containerd versions`,
      { hint: 'rebuild the image with molt image build --kubernetes-node DIR' },
    );
  return {
    [ReleaseLabel.KubeletVersion]: parsed.data.kubelet,
    [ReleaseLabel.ContainerdVersion]: parsed.data.containerd,
  };
}
