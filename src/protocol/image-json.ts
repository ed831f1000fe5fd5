// SPDX-License-Identifier: Apache-2.0
/**
 * What publishers read from `image.json` (the summary `molt image build --out DIR` writes beside
 * the artifacts): the release labels the image implies. The build records the kubelet and
 * containerd it put in as `kubernetesNode`, and publishing (`molt dev publish --dir`, the lab's
 * VM releases) turns them into `molt.dev/kubelet-version` and `molt.dev/containerd-version`, which
 * the agent's skew check reads before an upgrade (docs/adr/0015 §1); and rootfs.img's verity hash
 * tree, recorded as `verity`, into `dev.molt.verity.roothash` and `dev.molt.verity.offset`
 * (docs/adr/0019 §3).
 */
import { z } from 'zod';
import { ErrorCode, MoltError } from '../core/errors.ts';
import { isKubeVersion } from '../core/kubernetes/version.ts';
import { ReleaseLabel } from '../core/releases/release.ts';

const NodeRuntime = z.object({
  kubelet: z.string().min(1),
  containerd: z.string().min(1),
});

const Verity = z.object({
  rootHash: z.string().regex(/^[0-9a-f]{64}$/),
  hashOffset: z.number().int().positive().multipleOf(4096),
});

/** The labels of `image.json`'s node runtime and verity hash tree (each only when it has one). */
export function imageLabels(imageJson: unknown, what = 'image.json'): Record<string, string> {
  return { ...nodeRuntimeLabels(imageJson, what), ...verityLabels(imageJson, what) };
}

/**
 * The verity labels of a parsed `image.json`: none without `verity` (an image built before it
 * existed); a `verity` that is not a root hash and a 4 KiB-aligned offset is refused
 * (`MOLT_BAD_INPUT`), never published as a release that could not be opened.
 */
function verityLabels(imageJson: unknown, what: string): Record<string, string> {
  const verity: unknown = (imageJson as { verity?: unknown } | null)?.verity;
  if (verity === undefined || verity === null) return {};
  const parsed = Verity.safeParse(verity);
  if (!parsed.success)
    throw new MoltError(
      ErrorCode.BadInput,
      `${what}: verity does not name a root hash (64 hex digits) and a 4 KiB-aligned offset`,
      { hint: 'rebuild the image with molt image build' },
    );
  return {
    [ReleaseLabel.VerityRootHash]: parsed.data.rootHash,
    [ReleaseLabel.VerityOffset]: String(parsed.data.hashOffset),
  };
}

/**
 * The labels for a parsed `image.json`: none without `kubernetesNode` (an image without a node
 * runtime, or one built before it existed). A `kubernetesNode` that names no kubelet version is
 * refused (`MOLT_BAD_INPUT`): published unlabelled, its release would skip the skew check.
 */
function nodeRuntimeLabels(imageJson: unknown, what: string): Record<string, string> {
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
