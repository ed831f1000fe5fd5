// SPDX-License-Identifier: Apache-2.0
/** A cluster of three control-plane machines on fakes, for the Kubernetes plan tests (no tests). */
import type { ComponentSpec } from '../../core/kubernetes/types.ts';
import type { Release } from '../../core/releases/release.ts';
import {
  KubernetesClusterSpec,
  type KubernetesClusterSpecInput,
} from '../../protocol/kube-cluster.ts';
import {
  MemoryOperatorBackend,
  MemoryOperatorStore,
} from '../adapters/memory-store/operator-store.ts';
import { FakeKubeAgents } from '../ports/kube-agents.fake.ts';
import { FakeBundleResolver, FakeControlPlaneHealth } from '../ports/kube-health.fake.ts';
import type { KubePlanDeps } from './deps.ts';

export const repo = 'acme/installer-kubernetes';
export const ref = (version: string): string =>
  `127.0.0.1:5000/${repo}@sha256:${version.replace(/\D/g, '').padEnd(64, '0')}`;
export const specAt = (version: string, emulatedVersion?: string): ComponentSpec => ({
  version,
  bundle: ref(version),
  ...(emulatedVersion !== undefined && { emulatedVersion }),
  extraArgs: {},
});

const release = (digest: string, kubernetes: string): Release => ({
  digest,
  tag: '1.4.0',
  tags: ['1.4.0'],
  version: '1.4.0',
  channels: ['stable'],
  official: true,
  created: undefined,
  kubernetes,
  upgradeFrom: undefined,
  signature: { status: 'unchecked' },
});

export interface World {
  readonly backend: MemoryOperatorBackend;
  readonly store: MemoryOperatorStore;
  readonly agents: FakeKubeAgents;
  readonly health: FakeControlPlaneHealth;
  readonly bundles: FakeBundleResolver;
  readonly declared: Map<string, KubernetesClusterSpec>;
  /** Whether the declared objects have been read (`DeclaredKubernetes.read`). */
  read: boolean;
  /** The `dev.molt.kubernetes` range of the release every machine boots. */
  range: string;
  leader: boolean;
  readonly logs: string[];
  clock: number;
  deps(over?: Partial<KubePlanDeps>): KubePlanDeps;
  declare(spec: KubernetesClusterSpecInput): void;
}

/** cp-1..cp-3 on v1.35.4 (cp-2 leads etcd), bundles of v1.35.4, v1.35.5 and v1.36.3 published. */
export async function world(o: { version?: string; emulated?: string } = {}): Promise<World> {
  const backend = new MemoryOperatorBackend();
  const store = new MemoryOperatorStore({ backend });
  for (const id of ['cp-1', 'cp-2', 'cp-3'])
    await store.putMachine({
      id,
      endpoint: `https://${id}:7443`,
      role: 'control-plane',
      pool: 'cp',
      labels: {},
    });
  await store.putMachine({
    id: 'w-1',
    endpoint: 'https://w-1:7443',
    role: 'worker',
    pool: 'w',
    labels: {},
  });
  const w: World = {
    backend,
    store,
    agents: new FakeKubeAgents(
      ['cp-1', 'cp-2', 'cp-3'],
      specAt(o.version ?? 'v1.35.4', o.emulated),
      'cp-2',
    ),
    health: new FakeControlPlaneHealth(),
    bundles: new FakeBundleResolver(
      Object.fromEntries(
        ['v1.35.4', 'v1.35.5', 'v1.36.3', 'v1.37.0'].map((v) => [`${repo}:${v}`, ref(v)]),
      ),
    ),
    declared: new Map(),
    read: true,
    range: '>=1.35.0 <1.38.0',
    leader: true,
    logs: [],
    clock: 1_800_000_000_000,
    deps(over = {}) {
      return {
        store: new MemoryOperatorStore({ backend }),
        agents: w.agents,
        health: w.health,
        bundles: w.bundles,
        releases: () => Promise.resolve([release('sha256:os', w.range)]),
        booted: () => Promise.resolve('sha256:os'),
        declared: () => ({ specs: w.declared, read: w.read }),
        bundleRepository: repo,
        now: () => ++w.clock,
        log: (l) => w.logs.push(l),
        isLeader: () => w.leader,
        sleep: () => Promise.resolve(),
        ...over,
      };
    },
    declare(spec) {
      w.declared.set('default', KubernetesClusterSpec.parse(spec));
    },
  };
  return w;
}

/** The agent calls that change something (no status reads). */
export const actions = (calls: readonly string[]): string[] =>
  calls.filter((c) => !c.endsWith(' status') && !c.endsWith(' members'));
