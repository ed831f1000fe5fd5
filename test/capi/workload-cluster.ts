// SPDX-License-Identifier: Apache-2.0
// A Cluster API workload cluster for the slow CAPI suite: CAPD's in-memory backend
// (its fake API server, etcd and Nodes, served by capd-manager on 127.0.0.1), a KubeadmControlPlane
// of one replica (`maxSurge: 0`: in place before replacing), a MachineDeployment `c1-md` of one
// and `c1-md2` of two, `c1-md3` of one (`maxSurge: 0`, `maxUnavailable` all of them), all in
// namespace `demo` — the shapes the Cluster API research
// ran. The webhooks are not registered (docs/adr/0014), so what they would default is written here:
// the MachineDeployment's selector and template labels.
import {
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { eventually } from '../../src/platform/process/managed-process.ts';

/** An object to create (typed loosely: client-node's KubernetesObject is a class instance). */
export interface Obj {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
  };
  readonly spec?: unknown;
}

const asObject = (o: Obj): KubernetesObject => o;

export const ns = 'demo';
export const cluster = 'c1';
const infra = 'infrastructure.cluster.x-k8s.io';
const fast = { startupDuration: '1s', startupJitter: '0.2' };
const inMemory = {
  vm: { provisioning: { startupDuration: '2s', startupJitter: '0.2' } },
  ...{ node: { provisioning: fast }, apiServer: { provisioning: fast } },
  etcd: { provisioning: fast },
};
const criSocket = { nodeRegistration: { criSocket: 'unix:///var/run/containerd/containerd.sock' } };

/**
 * An in-memory machine template; `vmStartup` makes two of them differ in spec (CAPI compares the
 * templates' specs, not their names: a renamed copy is no change at all).
 */
const devMachineTemplate = (name: string, vmStartup = '2s'): Obj => ({
  apiVersion: `${infra}/v1beta2`,
  kind: 'DevMachineTemplate',
  metadata: { name, namespace: ns },
  spec: {
    template: {
      spec: {
        backend: {
          inMemory: {
            ...inMemory,
            vm: { provisioning: { startupDuration: vmStartup, startupJitter: '0.2' } },
          },
        },
      },
    },
  },
});

/**
 * The objects of the workload cluster `c1` at Kubernetes `version`. Each carries an annotation:
 * CAPD v1.14.2's in-memory DevCluster reconciler panics on an object without any ("assignment to
 * entry in nil map"; `kubectl apply` always adds one, which is why the research never saw it).
 */
export function workloadCluster(version: string): Obj[] {
  return objects(version).map((o) => ({
    ...o,
    metadata: {
      ...o.metadata,
      annotations: { 'molt.dev/suite': 'capi', ...o.metadata.annotations },
    },
  }));
}

const ref = (apiGroup: string, kind: string, name: string) => ({ apiGroup, kind, name });

/**
 * A MachineDeployment of `replicas` that CAPI updates all at once (`maxUnavailable` = replicas,
 * `maxSurge: 0`): it asks for every Machine together, and molt's pool decides the pace.
 */
function machineDeployment(name: string, version: string, replicas: number): Obj {
  const labels = {
    'cluster.x-k8s.io/cluster-name': cluster,
    'cluster.x-k8s.io/deployment-name': name,
  };
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'MachineDeployment',
    metadata: { name, namespace: ns, labels: { 'cluster.x-k8s.io/cluster-name': cluster } },
    spec: {
      clusterName: cluster,
      replicas,
      rollout: {
        strategy: {
          type: 'RollingUpdate',
          rollingUpdate: { maxSurge: 0, maxUnavailable: replicas },
        },
      },
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          clusterName: cluster,
          version,
          bootstrap: {
            configRef: ref('bootstrap.cluster.x-k8s.io', 'KubeadmConfigTemplate', `${cluster}-md`),
          },
          infrastructureRef: ref(infra, 'DevMachineTemplate', `${cluster}-md`),
        },
      },
    },
  };
}

function objects(version: string): Obj[] {
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
    {
      apiVersion: `${infra}/v1beta2`,
      kind: 'DevCluster',
      metadata: { name: cluster, namespace: ns },
      spec: { backend: { inMemory: {} } },
    },
    {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Cluster',
      metadata: { name: cluster, namespace: ns },
      spec: {
        clusterNetwork: {
          pods: { cidrBlocks: ['192.168.0.0/16'] },
          services: { cidrBlocks: ['10.128.0.0/12'] },
        },
        infrastructureRef: ref(infra, 'DevCluster', cluster),
        controlPlaneRef: ref(
          'controlplane.cluster.x-k8s.io',
          'KubeadmControlPlane',
          `${cluster}-cp`,
        ),
      },
    },
    devMachineTemplate(`${cluster}-cp`),
    {
      apiVersion: 'controlplane.cluster.x-k8s.io/v1beta2',
      kind: 'KubeadmControlPlane',
      metadata: { name: `${cluster}-cp`, namespace: ns },
      spec: {
        replicas: 1,
        version,
        rollout: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0 } } },
        machineTemplate: {
          spec: { infrastructureRef: ref(infra, 'DevMachineTemplate', `${cluster}-cp`) },
        },
        kubeadmConfigSpec: {
          clusterConfiguration: { apiServer: { certSANs: ['localhost', '127.0.0.1'] } },
          initConfiguration: criSocket,
          joinConfiguration: criSocket,
        },
      },
    },
    devMachineTemplate(`${cluster}-md`),
    devMachineTemplate(`${cluster}-md-2`, '3s'),
    {
      apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta2',
      kind: 'KubeadmConfigTemplate',
      metadata: { name: `${cluster}-md`, namespace: ns },
      spec: { template: { spec: { joinConfiguration: criSocket } } },
    },
    machineDeployment(`${cluster}-md`, version, 1),
    machineDeployment(`${cluster}-md2`, version, 2),
    machineDeployment(`${cluster}-md3`, version, 1),
  ];
}

export interface Condition {
  readonly type: string;
  readonly status: string;
  readonly reason?: string;
  readonly message?: string;
}

export interface CapiMachine extends KubernetesObject {
  readonly metadata: KubernetesObject['metadata'] & { name: string };
  readonly spec: { version?: string; providerID?: string };
  readonly status?: {
    readonly phase?: string;
    readonly nodeRef?: { name: string };
    readonly conditions?: readonly Condition[];
  };
}

export const conditionOf = (m: CapiMachine, type: string): Condition | undefined =>
  m.status?.conditions?.find((c) => c.type === type);

export interface Management {
  create(o: Obj): Promise<void>;
  machines(): Promise<CapiMachine[]>;
  /** The Machines of MachineDeployment `md` (default `c1-md`; not the control plane's). */
  workers(md?: string): Promise<CapiMachine[]>;
  /** Merge-patch `spec.template.spec` of MachineDeployment `md` (default `c1-md`). */
  patchMachineDeployment(spec: Record<string, unknown>, md?: string): Promise<void>;
  /** The KubeadmControlPlane's one Machine, once it has a Node. */
  controlPlaneReady(timeoutMs: number): Promise<CapiMachine>;
  /** Merge-patch the KubeadmControlPlane's `spec`. */
  patchControlPlane(spec: Record<string, unknown>): Promise<void>;
  /** The `count` Machines of `md`, once each has a Node. */
  workersReady(md: string, count: number, timeoutMs: number): Promise<CapiMachine[]>;
  annotate(machine: string, annotations: Record<string, string>): Promise<void>;
  /** The one worker Machine of `c1-md` with a Node (other than `not`), once there is exactly one. */
  oneWorker(timeoutMs: number, not?: string): Promise<CapiMachine>;
  /** The same for MachineDeployment `md`. */
  oneWorkerOf(md: string, timeoutMs: number, not?: string): Promise<CapiMachine>;
  /** The workload cluster's own API (CAPD's in-memory server), by its kubeconfig Secret. */
  workloadNodes(): Promise<CoreV1Api>;
}

/** The management cluster's objects, as its admin. */
export function management(kubeconfig: string): Management {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const objects = KubernetesObjectApi.makeApiClient(kc);
  const mergePatch = async (o: Obj): Promise<void> => {
    await objects.patch(
      asObject(o),
      undefined,
      undefined,
      undefined,
      undefined,
      PatchStrategy.MergePatch,
    );
  };
  const machines = async (): Promise<CapiMachine[]> =>
    (await objects.list<CapiMachine>('cluster.x-k8s.io/v1beta2', 'Machine', ns)).items;
  const workers = async (md = `${cluster}-md`): Promise<CapiMachine[]> =>
    (await machines()).filter(
      (m) => m.metadata.labels?.['cluster.x-k8s.io/deployment-name'] === md,
    );
  const oneWorkerOf = (md: string, timeoutMs: number, not?: string): Promise<CapiMachine> =>
    eventually(
      async () => {
        const all = await workers(md);
        const m = all.find((x) => x.metadata.name !== not);
        if (all.length !== 1 || m?.status?.nodeRef === undefined)
          throw new Error(`${md} Machines: ${all.map((x) => x.metadata.name).join(', ')}`);
        return m;
      },
      { timeoutMs, intervalMs: 1_000 },
    );
  return {
    async create(o) {
      await objects.create(asObject(o));
    },
    machines,
    workers,
    patchMachineDeployment: (spec, md = `${cluster}-md`) =>
      mergePatch({
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'MachineDeployment',
        metadata: { name: md, namespace: ns },
        spec: { template: { spec } },
      }),
    annotate: (machine, annotations) =>
      mergePatch({
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'Machine',
        metadata: { name: machine, namespace: ns, annotations },
      }),
    oneWorker: (timeoutMs, not) => oneWorkerOf(`${cluster}-md`, timeoutMs, not),
    oneWorkerOf,
    controlPlaneReady: (timeoutMs) =>
      eventually(
        async () => {
          const cp = (await machines()).filter(
            (m) => m.metadata.labels?.['cluster.x-k8s.io/control-plane'] !== undefined,
          );
          const [m] = cp;
          if (cp.length !== 1 || m?.status?.nodeRef === undefined)
            throw new Error(`control-plane Machines: ${cp.map((x) => x.metadata.name).join(', ')}`);
          return m;
        },
        { timeoutMs, intervalMs: 1_000 },
      ),
    patchControlPlane: (spec) =>
      mergePatch({
        apiVersion: 'controlplane.cluster.x-k8s.io/v1beta2',
        kind: 'KubeadmControlPlane',
        metadata: { name: `${cluster}-cp`, namespace: ns },
        spec,
      }),
    workersReady: (md, count, timeoutMs) =>
      eventually(
        async () => {
          const all = await workers(md);
          if (all.length !== count || all.some((m) => m.status?.nodeRef === undefined))
            throw new Error(`${md}: ${all.map((x) => x.metadata.name).join(', ')}`);
          return all;
        },
        { timeoutMs, intervalMs: 1_000 },
      ),
    async workloadNodes() {
      const core = kc.makeApiClient(CoreV1Api);
      const secret = await core.readNamespacedSecret({
        name: `${cluster}-kubeconfig`,
        namespace: ns,
      });
      const value = secret.data?.['value'];
      if (value === undefined) throw new Error('no kubeconfig in the cluster’s Secret');
      const wk = new KubeConfig();
      wk.loadFromString(Buffer.from(value, 'base64').toString('utf8'));
      return wk.makeApiClient(CoreV1Api);
    },
  };
}

/**
 * Play the kubelet of the in-memory Node `name`: report `version` as its kubeletVersion (what a
 * real kubelet on the machine molt booted would report; CAPD's Nodes never change by themselves).
 */
export async function reportKubelet(
  nodes: CoreV1Api,
  name: string,
  version: string,
): Promise<void> {
  // CAPD's in-memory API server serves no status subresource: the Node itself is patched.
  await nodes.patchNode(
    { name, body: { status: { nodeInfo: { kubeletVersion: version } } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}
