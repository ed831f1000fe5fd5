// SPDX-License-Identifier: Apache-2.0
// The core of the real-node scenarios in `npm test` (docs/adr/0015): `molt lab up --vms 1
// --workers 0` — a VM booting the OS release 1.0.0, which carries containerd 2 and the previous
// minor's kubelet, joins the lab's cluster by TLS bootstrap, and the lab's workloads (a Deployment
// and a StatefulSet under PodDisruptionBudgets) run on it as real containers pulled from the lab's
// registry, reached through the lab bridge by its own address. The rolling upgrade of two nodes under those budgets, and a release whose kubelet
// cannot start, are in `npm run test:vm` (test/vm/real-nodes.test.ts).
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  assertJoined,
  assertPodsInContainers,
  KubeletBefore,
  nodeLab,
} from '../vm/harness/node-lab.ts';
import { assertOnBridge } from '../vm/harness/bridge-checks.ts';

describe('a real Kubernetes node on a molt VM: joined by TLS bootstrap, running real containers', () => {
  const lab = nodeLab(1, join(import.meta.dirname, '../../.molt/real-node-molt-config.yaml'));

  it('joins by TLS bootstrap as its own Node, Ready, on release 1.0.0’s kubelet, in the pool the lab labels', async () => {
    await assertJoined(lab, KubeletBefore);
  });

  it('runs the lab’s Deployment and StatefulSet as containerd containers pulled by digest', async () => {
    await assertPodsInContainers(lab);
  });

  it('is on the lab bridge: its bridge address is its InternalIP, kubectl logs and exec reach its pods', async () => {
    await assertOnBridge(lab);
  });
});
