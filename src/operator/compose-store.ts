// SPDX-License-Identifier: Apache-2.0
/**
 * The store, leader election and FleetLock semaphores the config's `store` names (docs/adr/0005
 * §4, 0016): etcd; the Kubernetes API (OperatorRecords, with the coordination Lease for
 * leadership); or memory (this process only: a restart forgets them). Each backend's client is
 * imported only when the config names it: etcd's (grpc-js and protobufjs, about a fifth of the
 * operator's modules) costs seconds of start-up on a small or emulated node that never uses it.
 */
import { dirname, resolve } from 'node:path';
import { MemoryFleetLockStore } from './adapters/memory-fleetlock/store.ts';
import {
  createMemoryLeadership,
  MemoryLeadershipBackend,
} from './adapters/memory-leadership/leadership.ts';
import { MemoryOperatorStore } from './adapters/memory-store/operator-store.ts';
import type { LoadedConfig } from './config.ts';
import type { FleetLockStore } from './ports/fleetlock-store.ts';
import type { Leadership } from './ports/leadership.ts';
import type { OperatorStore } from './ports/store.ts';

export interface StateParts {
  readonly store: OperatorStore;
  readonly leadership: Leadership;
  readonly fleetLock: FleetLockStore;
}

export async function stateOf(
  c: LoadedConfig,
  configPath: string,
  id: string,
): Promise<StateParts> {
  const store = c.config.store;
  const ttlSeconds = Math.max(1, Math.round(c.config.leaderTtl / 1000));
  if (store === 'memory')
    return {
      store: new MemoryOperatorStore(),
      leadership: createMemoryLeadership(new MemoryLeadershipBackend(), id),
      fleetLock: new MemoryFleetLockStore(),
    };
  if ('etcd' in store) {
    const [{ createEtcdOperatorStore }, { EtcdFleetLockStore }, { createEtcdLeadership }] =
      await Promise.all([
        import('./adapters/etcd-store/operator-store.ts'),
        import('./adapters/etcd-fleetlock/store.ts'),
        import('./adapters/etcd-leadership/leadership.ts'),
      ]);
    return {
      store: createEtcdOperatorStore({ endpoints: store.etcd }),
      fleetLock: new EtcdFleetLockStore({ endpoints: store.etcd }),
      leadership: createEtcdLeadership({ endpoints: store.etcd, id, ttlSeconds }),
    };
  }
  const { kc, namespace } = await kubeTarget(c, configPath);
  const [{ openKubeOperatorStore }, { KubeFleetLockStore }, { createKubeLeadership }] =
    await Promise.all([
      import('./adapters/kube-store/operator-store.ts'),
      import('./adapters/kube-store/fleetlock.ts'),
      import('./adapters/kube-leadership/leadership.ts'),
    ]);
  return {
    store: await openKubeOperatorStore({ kc, namespace }),
    fleetLock: new KubeFleetLockStore({ kc, namespace }),
    leadership: createKubeLeadership({ kc, namespace, id, ttlSeconds }),
  };
}

/**
 * The cluster and namespace of `store: kubernetes`: the store's own kubeconfig, else the
 * `kubernetes:` section's, else the pod's service account; its own namespace, else the section's,
 * else the pod's, else molt-system.
 */
async function kubeTarget(c: LoadedConfig, configPath: string) {
  const { loadInClusterKubeConfig, loadKubeConfig } = await import('../platform/kube/client.ts');
  const own =
    c.config.store !== 'memory' && 'kubernetes' in c.config.store ? c.config.store.kubernetes : {};
  const section = c.config.kubernetes;
  const file = own.kubeconfig ?? section?.kubeconfig;
  const namespace = own.namespace ?? section?.namespace;
  if (file !== undefined)
    return {
      kc: await loadKubeConfig(resolve(dirname(configPath), file)),
      namespace: namespace ?? 'molt-system',
    };
  const pod = await loadInClusterKubeConfig();
  return { kc: pod.kc, namespace: namespace ?? pod.namespace ?? 'molt-system' };
}
