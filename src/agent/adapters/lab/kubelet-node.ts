// SPDX-License-Identifier: Apache-2.0
/**
 * A kubelet's API role without containers, as KWOK plays it (docs/kubernetes.md; reference §8): the
 * lab's agent runs it for its machine (docs/adr/0006 §8), tests and the P4 benchmark for bare nodes.
 * It acts under the node's own identity (`system:node:<name>`, so the Node authorizer and NodeRestriction
 * hold it to what a real kubelet may do): registers its Node and reports it Ready with the booted
 * molt version (node info and the `molt.dev/version` label) and its machine's boot id (as a kubelet
 * reports the kernel's, so the agent's readiness check can tell this boot's report from the last
 * one's), renews its Lease in
 * `kube-node-lease`, marks pods bound to it Running and Ready, and completes their deletion. It
 * lives in the agent's process, so while the machine reboots nothing reports and the node really
 * goes NotReady; a clean shutdown first reports NotReady itself, as a kubelet's graceful node
 * shutdown does. An API server that is down (a control-plane upgrade) is retried every period.
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
} from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { tendPods } from './kubelet-pods.ts';

export interface LabKubeletOptions {
  readonly kc: KubeConfig;
  readonly name: string;
  readonly version: string;
  /**
   * The boot it runs in (`status.nodeInfo.bootID`): the lab machine's, from its firmware. Without
   * one the Node reports none.
   */
  readonly bootId?: string;
  /** The node's InternalIP: its lab machine's address (lab/fleet/network.ts). @default 127.0.0.1 */
  readonly address?: string;
  readonly labels?: Readonly<Record<string, string>>;
  /** @default 300 */
  readonly periodMs?: number;
  /** Told about failed registrations, heartbeats and pod updates (retried next period). */
  readonly onError?: (e: unknown) => void;
  /**
   * Whether pods of `image` become Ready (docs/adr/0013 §7; `image-readiness.ts` reads it from
   * the image's labels). A pod with any container (init ones included) on an image not ready
   * still runs, but is never Ready: `Ready` and `ContainersReady` False with the reason in their
   * message, that container `ready: false`. A rejection leaves the pod Pending until next period.
   * @default every image is ready
   */
  readonly imageReady?: (image: string) => Promise<{ ready: boolean; reason?: string }>;
}

export interface LabKubelet {
  readonly name: string;
  /** Resolves once the node is registered and reported Ready the first time. */
  readonly ready: Promise<void>;
  /** Stop reporting. */
  stop(): Promise<void>;
  /** Report the node NotReady ("node is shutting down"), best effort, then stop. */
  shutdown(): Promise<void>;
}

const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const leaseSeconds = 40;

function conditions(now: string, ready: boolean) {
  const c = (type: string, status: string, reason: string) => ({
    type,
    status,
    reason,
    message: reason,
    lastHeartbeatTime: now,
    lastTransitionTime: now,
  });
  return [
    ready
      ? c('Ready', 'True', 'KubeletReady')
      : c('Ready', 'False', 'KubeletNotReady: node is shutting down'),
    c('MemoryPressure', 'False', 'KubeletHasSufficientMemory'),
    c('DiskPressure', 'False', 'KubeletHasNoDiskPressure'),
    c('PIDPressure', 'False', 'KubeletHasSufficientPID'),
  ];
}

async function reportNode(
  core: CoreV1Api,
  o: Pick<LabKubeletOptions, 'name' | 'version' | 'address' | 'bootId'>,
  ready = true,
): Promise<void> {
  const { name, version } = o;
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
          conditions: conditions(now, ready),
          addresses: [{ type: 'InternalIP', address: o.address ?? '127.0.0.1' }],
          capacity: { cpu: '1k', memory: '1Ti', pods: '1M' },
          allocatable: { cpu: '1k', memory: '1Ti', pods: '1M' },
          nodeInfo: {
            kubeletVersion: 'v1.36.3',
            osImage: `molt ${version}`,
            machineID: name,
            systemUUID: name,
            ...(o.bootId !== undefined && { bootID: o.bootId }),
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

/** Start registering and reporting the node in the background; see {@link LabKubelet.ready}. */
export function startLabKubelet(o: LabKubeletOptions): LabKubelet {
  const core = o.kc.makeApiClient(CoreV1Api);
  const lease = o.kc.makeApiClient(CoordinationV1Api);
  const labels = { 'kubernetes.io/hostname': o.name, 'kubernetes.io/os': 'linux', ...o.labels };
  // Read through functions: the loop must see changes made while it awaits.
  const state = { stopped: false, registered: false };
  const stopped = (): boolean => state.stopped;
  const registered = (): boolean => state.registered;
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  const register = async (): Promise<void> => {
    await core
      .createNode({ body: { metadata: { name: o.name, labels } } })
      .catch(async (e: unknown) => {
        // Already there (a reboot, a re-registration): carry on; anything else is retried.
        await core.readNode({ name: o.name }).catch(() => {
          throw e;
        });
      });
    state.registered = true;
  };
  const beat = async (): Promise<void> => {
    if (!registered()) await register();
    await renewLease(lease, o.name);
    await reportNode(core, o);
    markReady();
  };
  const loop = (async () => {
    let lastBeat = 0;
    while (!stopped()) {
      try {
        if (Date.now() - lastBeat > 2_000) {
          await beat();
          lastBeat = Date.now();
        }
        await tendPods(core, o);
      } catch (e) {
        // The API server may be restarting (control-plane upgrades): try again next period.
        o.onError?.(e);
      }
      await sleep(o.periodMs ?? 300);
    }
  })();
  const stop = async (): Promise<void> => {
    state.stopped = true;
    await loop;
  };
  return {
    name: o.name,
    ready,
    stop,
    async shutdown() {
      await stop();
      if (!registered()) return;
      await Promise.race([
        reportNode(core, o, false).catch((e: unknown) => o.onError?.(e)),
        sleep(2_000),
      ]);
    },
  };
}
