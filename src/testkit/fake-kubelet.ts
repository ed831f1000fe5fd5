// SPDX-License-Identifier: Apache-2.0
/**
 * A kubelet's API role without containers, as KWOK plays it (docs/kubernetes.md; reference §8),
 * under the node's own identity (`system:node:<name>`, so the Node authorizer and NodeRestriction
 * hold it to what a real kubelet may do): registers its Node and reports it Ready with the booted
 * molt version (node info and the `molt.dev/version` label), renews its Lease in
 * `kube-node-lease`, marks pods bound to it Running and Ready, and completes their deletion. While
 * paused (the machine reboots) it does none of this, so the node really goes NotReady.
 *
 * Pods are found by polling a field-selected list (every `periodMs`), which costs one request per
 * period however many pods there are and needs no watch bookkeeping.
 */
import {
  CoordinationV1Api,
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  V1MicroTime,
  type V1Pod,
} from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';

export interface FakeKubeletOptions {
  readonly kc: KubeConfig;
  readonly name: string;
  readonly version: string;
  readonly labels?: Readonly<Record<string, string>>;
  /** @default 300 */
  readonly periodMs?: number;
  /** Told about failed heartbeats and pod updates (retried next period). */
  readonly onError?: (e: unknown) => void;
}

export interface FakeKubelet {
  readonly name: string;
  /** Stop reporting (a reboot or a crash): the controllers mark the node NotReady. */
  pause(): void;
  /** Report again, as `version` when given (the machine booted a new release). */
  resume(version?: string): Promise<void>;
  stop(): Promise<void>;
}

const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const leaseSeconds = 40;

function readyConditions(now: string) {
  const c = (type: string, status: string, reason: string) => ({
    type,
    status,
    reason,
    message: reason,
    lastHeartbeatTime: now,
    lastTransitionTime: now,
  });
  return [
    c('Ready', 'True', 'KubeletReady'),
    c('MemoryPressure', 'False', 'KubeletHasSufficientMemory'),
    c('DiskPressure', 'False', 'KubeletHasNoDiskPressure'),
    c('PIDPressure', 'False', 'KubeletHasSufficientPID'),
  ];
}

async function reportNode(core: CoreV1Api, name: string, version: string): Promise<void> {
  const now = new Date().toISOString();
  await core.patchNode(
    { name, body: { metadata: { labels: { 'molt.dev/version': version } } } },
    merge,
  );
  await core.patchNodeStatus(
    {
      name,
      body: {
        status: {
          conditions: readyConditions(now),
          addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
          capacity: { cpu: '1k', memory: '1Ti', pods: '1M' },
          allocatable: { cpu: '1k', memory: '1Ti', pods: '1M' },
          nodeInfo: {
            kubeletVersion: 'v1.36.3',
            osImage: `molt ${version}`,
            machineID: name,
            systemUUID: name,
            bootID: name,
            kernelVersion: 'lab',
            containerRuntimeVersion: 'lab://0',
            kubeProxyVersion: '',
            operatingSystem: 'linux',
            architecture: 'amd64',
          },
        },
      },
    },
    merge,
  );
}

async function renewLease(lease: CoordinationV1Api, name: string): Promise<void> {
  const namespace = 'kube-node-lease';
  const spec = {
    holderIdentity: name,
    leaseDurationSeconds: leaseSeconds,
    // MicroTime: a plain Date would be sent with milliseconds, which the API server refuses.
    renewTime: new V1MicroTime(),
  };
  try {
    const current = await lease.readNamespacedLease({ name, namespace });
    await lease.replaceNamespacedLease({
      name,
      namespace,
      body: { metadata: current.metadata ?? { name, namespace }, spec },
    });
  } catch {
    await lease.createNamespacedLease({ namespace, body: { metadata: { name, namespace }, spec } });
  }
}

const bound = (p: V1Pod) => ({
  name: p.metadata?.name ?? '',
  namespace: p.metadata?.namespace ?? '',
});

async function tendPods(
  core: CoreV1Api,
  node: string,
  onError: ((e: unknown) => void) | undefined,
): Promise<void> {
  const pods = await core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` });
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
      const ready = ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({
        type,
        status: 'True',
        lastTransitionTime: now,
      }));
      await core
        .patchNamespacedPodStatus(
          {
            ...bound(p),
            body: {
              status: {
                phase: 'Running',
                conditions: ready,
                hostIP: '127.0.0.1',
                podIP: '10.244.0.1',
                startTime: now,
                containerStatuses: (p.spec?.containers ?? []).map((c) => ({
                  name: c.name,
                  image: c.image,
                  imageID: '',
                  ready: true,
                  restartCount: 0,
                  started: true,
                  state: { running: { startedAt: now } },
                })),
              },
            },
          },
          merge,
        )
        .catch(() => undefined);
    }),
  );
}

/** Register the node and start reporting; resolves once the node is Ready. */
export async function startFakeKubelet(o: FakeKubeletOptions): Promise<FakeKubelet> {
  const core = o.kc.makeApiClient(CoreV1Api);
  const lease = o.kc.makeApiClient(CoordinationV1Api);
  const labels = { 'kubernetes.io/hostname': o.name, 'kubernetes.io/os': 'linux', ...o.labels };
  await core
    .createNode({ body: { metadata: { name: o.name, labels } } })
    .catch(async () => core.readNode({ name: o.name }));
  let version = o.version;
  // Read through functions: the loop must see changes made while it awaits.
  const state = { paused: false, stopped: false };
  const stopped = (): boolean => state.stopped;
  const paused = (): boolean => state.paused;
  const beat = async (): Promise<void> => {
    await renewLease(lease, o.name);
    await reportNode(core, o.name, version);
  };
  await beat();
  const loop = (async () => {
    let lastBeat = Date.now();
    while (!stopped()) {
      await sleep(o.periodMs ?? 300);
      if (paused() || stopped()) continue;
      try {
        if (Date.now() - lastBeat > 2_000) {
          await beat();
          lastBeat = Date.now();
        }
        await tendPods(core, o.name, o.onError);
      } catch (e) {
        // The API server may be restarting (control-plane upgrades): try again next period.
        o.onError?.(e);
      }
    }
  })();
  return {
    name: o.name,
    pause() {
      state.paused = true;
    },
    async resume(next) {
      if (next !== undefined) version = next;
      await beat();
      state.paused = false;
    },
    async stop() {
      state.stopped = true;
      await loop;
    },
  };
}
