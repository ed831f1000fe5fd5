// SPDX-License-Identifier: Apache-2.0
/**
 * A TCP relay on the host to the lab's in-cluster operator (`molt lab up --operator cluster`):
 * `molt lab env` and the dashboard keep one address while the operator's pods move from node to
 * node. Each connection goes to the pod that holds the operator's Lease (writes need the leader),
 * else to any Ready replica, found anew per connection; TLS passes through untouched, so the
 * operator checks the client's certificate itself. The host reaches pod addresses through the
 * routes the lab adds to each VM's pod subnet (fleet/network.ts `route`).
 *
 * In-house rather than `kubectl port-forward`: that binds one pod for its whole life and dies
 * with it — exactly when the operator's node is drained.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { CoordinationV1Api, CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { loadKubeConfig } from '../../platform/kube/client.ts';

export interface PodRelayTarget {
  readonly namespace: string;
  /** The pods' `app.kubernetes.io/name` label, and the Lease's name. */
  readonly name: string;
  readonly kubeconfig: string;
}

export interface PodRelay {
  /** `127.0.0.1:port` for each relayed container port. */
  readonly addresses: ReadonlyMap<number, string>;
  close(): Promise<void>;
}

/** Connections waiting for a pod, at most; more are closed at once. */
const MaxConnections = 256;
const ConnectMs = 10_000;

const ready = (p: V1Pod): boolean =>
  p.metadata?.deletionTimestamp == null &&
  (p.status?.podIP ?? '') !== '' &&
  (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

/** Start relays from free ports on 127.0.0.1 to each of `ports` of the target's pods. */
export async function startPodRelay(
  t: PodRelayTarget,
  ports: readonly number[],
): Promise<PodRelay> {
  const kc = await loadKubeConfig(t.kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  const leases = kc.makeApiClient(CoordinationV1Api);
  /** The leader's address when it is Ready, else any Ready replica's. */
  const podAddress = async (): Promise<string | undefined> => {
    const [pods, holder] = await Promise.all([
      core.listNamespacedPod({
        namespace: t.namespace,
        labelSelector: `app.kubernetes.io/name=${t.name}`,
      }),
      leases
        .readNamespacedLease({ namespace: t.namespace, name: t.name })
        .then((l) => l.spec?.holderIdentity ?? '')
        .catch(() => ''),
    ]);
    const live = pods.items.filter(ready);
    // The operator's id in a pod is `<pod name>-<pid>`.
    const leading = live.find((p) => holder.startsWith(`${p.metadata?.name ?? '?'}-`));
    return (leading ?? live[0])?.status?.podIP;
  };
  const servers: Server[] = [];
  const open = new Set<Socket>();
  const addresses = new Map<number, string>();
  for (const port of ports) {
    const server = createServer((client: Socket) => {
      open.add(client);
      client.on('close', () => open.delete(client));
      client.on('error', () => client.destroy());
      podAddress()
        .then((address) => {
          if (address === undefined || client.destroyed) {
            client.destroy();
            return;
          }
          const pod = createConnection({ host: address, port, timeout: ConnectMs });
          pod.once('connect', () => pod.setTimeout(0));
          pod.once('timeout', () => pod.destroy());
          pod.on('error', () => client.destroy());
          client.on('close', () => pod.destroy());
          pod.on('close', () => client.destroy());
          client.pipe(pod).pipe(client);
        })
        .catch(() => client.destroy());
    });
    server.maxConnections = MaxConnections;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        resolve();
      });
    });
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('relay: no port');
    addresses.set(port, `127.0.0.1:${String(address.port)}`);
    servers.push(server);
  }
  return {
    addresses,
    close: async () => {
      const closed = servers.map(
        (s) =>
          new Promise<void>((r) => {
            s.close(() => {
              r();
            });
          }),
      );
      for (const c of open) c.destroy();
      await Promise.all(closed);
    },
  };
}
