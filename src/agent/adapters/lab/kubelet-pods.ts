// SPDX-License-Identifier: Apache-2.0
/**
 * The lab kubelet's pods (kubelet-node.ts): a Pending pod bound to the node is reported Running —
 * Ready, unless an image of it is not (docs/adr/0013 §7) — and a deleted one is deleted for good.
 */
import {
  PatchStrategy,
  setHeaderOptions,
  type CoreV1Api,
  type V1Pod,
} from '@kubernetes/client-node';

const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

const bound = (p: V1Pod) => ({
  name: p.metadata?.name ?? '',
  namespace: p.metadata?.namespace ?? '',
});

type ImageReady = (image: string) => Promise<{ ready: boolean; reason?: string }>;

/** The containers of `p` (init ones too) whose image is not ready, with why. */
async function unready(p: V1Pod, imageReady: ImageReady | undefined): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (imageReady === undefined) return out;
  const all = [...(p.spec?.initContainers ?? []), ...(p.spec?.containers ?? [])].map((c) => ({
    name: c.name,
    image: c.image ?? '',
  }));
  const images = [...new Set(all.map((c) => c.image))];
  const verdicts = new Map(
    await Promise.all(images.map(async (i) => [i, await imageReady(i)] as const)),
  );
  for (const c of all) {
    const v = verdicts.get(c.image);
    if (v?.ready === false) out.set(c.name, v.reason ?? `image ${c.image} is not ready`);
  }
  return out;
}

/** A Pending pod started: Running, and Ready unless an image says otherwise. */
function started(p: V1Pod, bad: ReadonlyMap<string, string>, now: string) {
  const cond = (type: string, ok: boolean) =>
    ok
      ? { type, status: 'True', lastTransitionTime: now }
      : {
          type,
          status: 'False',
          reason: 'ContainersNotReady',
          message: `containers with unready status: [${[...bad.keys()].join(' ')}]: ${[...new Set(bad.values())].join('; ')}`,
          lastTransitionTime: now,
        };
  const ready = bad.size === 0;
  return {
    phase: 'Running',
    conditions: [
      cond('Initialized', true),
      cond('Ready', ready),
      cond('ContainersReady', ready),
      cond('PodScheduled', true),
    ],
    hostIP: '127.0.0.1',
    podIP: '10.244.0.1',
    startTime: now,
    containerStatuses: (p.spec?.containers ?? []).map((c) => ({
      name: c.name,
      image: c.image,
      imageID: '',
      ready: !bad.has(c.name),
      restartCount: 0,
      started: true,
      state: { running: { startedAt: now } },
    })),
  };
}

/** Start the node's Pending pods, complete the deletion of deleted ones. */
export async function tendPods(
  core: CoreV1Api,
  o: {
    readonly name: string;
    readonly onError?: ((e: unknown) => void) | undefined;
    readonly imageReady?: ImageReady | undefined;
  },
): Promise<void> {
  const { onError } = o;
  const pods = await core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${o.name}` });
  const now = new Date().toISOString();
  await Promise.all(
    pods.items.map(async (p) => {
      if (p.metadata?.deletionTimestamp !== undefined) {
        await core
          .deleteNamespacedPod({
            ...bound(p),
            gracePeriodSeconds: 0,
            body: { gracePeriodSeconds: 0, preconditions: { uid: p.metadata.uid ?? '' } },
          })
          .catch((e: unknown) => onError?.(e));
        return;
      }
      if (p.status?.phase !== 'Pending') return;
      let bad: Map<string, string>;
      try {
        bad = await unready(p, o.imageReady);
      } catch (e) {
        // As an image pull that failed: the pod stays Pending and is tried again next period.
        onError?.(e);
        return;
      }
      await core
        .patchNamespacedPodStatus({ ...bound(p), body: { status: started(p, bad, now) } }, merge)
        .catch(() => undefined);
    }),
  );
}
