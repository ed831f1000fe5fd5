// SPDX-License-Identifier: Apache-2.0
// The operator's leader election through a coordination.k8s.io Lease on a real kube-apiserver,
// held to the same conformance suite as the in-memory fake and the etcd adapter.
import { setTimeout as sleep } from 'node:timers/promises';
import { CoordinationV1Api, CoreV1Api } from '@kubernetes/client-node';
import { createKubeLeadership } from '../../../src/operator/adapters/kube-leadership/leadership.ts';
import { loadKubeConfig } from '../../../src/platform/kube/client.ts';
import { startKubeControlPlane } from '../../../src/lab/services/kube-control-plane.ts';
import { leadershipConformance } from '../../../src/testkit/leadership-conformance.ts';

const ttlSeconds = 3;
const namespace = 'molt-system';

leadershipConformance({
  name: 'Kubernetes Lease',
  ttlSeconds,
  async start() {
    const cp = await startKubeControlPlane();
    const kc = await loadKubeConfig(cp.admin.kubeconfig);
    await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
    return {
      open: (id) => createKubeLeadership({ kc, namespace, id, ttlSeconds }),
      elapse: (seconds) => sleep(seconds * 1000),
      async loseClaim() {
        await kc
          .makeApiClient(CoordinationV1Api)
          .deleteNamespacedLease({ name: 'molt-operator', namespace });
      },
      stop: () => cp.stop(),
    };
  },
});
