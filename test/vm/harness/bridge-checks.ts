// SPDX-License-Identifier: Apache-2.0
/**
 * A netns lab's VMs on its bridge (docs/adr/0018): each Node's InternalIP is its VM's own address
 * there, the API server reaches every kubelet (`kubectl logs`, `exec`), and a pod on one VM
 * reaches a pod on another through the routes molt rendered — no overlay.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { readLabStateFile } from '../../../src/lab/state.ts';
import type { NetworkRecord } from '../../../src/lab/fleet/network.ts';
import { pageOf } from '../../../src/lab/services/container-images.ts';
import { podReady, type NodeLab } from './node-lab.ts';

const run = promisify(execFile);

/** The lab's kubectl on its admin kubeconfig; rejects with kubectl's stderr. */
async function kubectl(lab: NodeLab, args: readonly string[]): Promise<string> {
  const s = await readLabStateFile(lab.dir());
  assert.ok(s?.kubectl !== undefined && s.kubeconfig !== undefined, 'a lab with Kubernetes');
  const r = await run(s.kubectl, ['--kubeconfig', s.kubeconfig, ...args], { timeout: 60_000 });
  return r.stdout;
}

export async function assertOnBridge(lab: NodeLab): Promise<void> {
  const network = JSON.parse(
    await readFile(join(lab.dir(), 'network.json'), 'utf8'),
  ) as NetworkRecord;
  assert.equal(network.taps?.length, lab.vms.length, 'a tap on the bridge for each VM');
  const prefix = network.subnet.replace(/0\/24$/, '');
  const addresses: string[] = [];
  for (const name of lab.vms) {
    const node = await lab.core().readNode({ name });
    const internal = node.status?.addresses?.find((a) => a.type === 'InternalIP')?.address ?? '';
    assert.ok(
      internal.startsWith(prefix),
      `${name}'s InternalIP ${internal} is on ${network.subnet}`,
    );
    addresses.push(internal);
  }
  assert.equal(
    new Set(addresses).size,
    lab.vms.length,
    `each Node its own address: ${addresses.join(', ')}`,
  );

  const pods = (
    await lab.core().listNamespacedPod({ namespace: 'shop', labelSelector: 'app=web' })
  ).items.filter(podReady);
  // From a pod on the first VM to one on the second (the routes), or, with one VM, to another
  // pod beside it (exec and logs still go through the bridge).
  const a = pods.find((p) => p.spec?.nodeName === lab.vms[0]);
  const b = pods.find(
    (p) => p !== a && p.spec?.nodeName === lab.vms.at(lab.vms.length > 1 ? 1 : 0),
  );
  assert.ok(a !== undefined && b !== undefined, 'a web pod on each of the first two VMs');
  for (const p of [a, b]) await kubectl(lab, ['logs', '-n', 'shop', p.metadata?.name ?? '']);
  // nc, not wget: the static busybox's wget crashes resolving even an address (glibc's NSS).
  const request = 'printf "GET / HTTP/1.0\\r\\n\\r\\n"';
  const page = await kubectl(lab, [
    ...['exec', '-n', 'shop', a.metadata?.name ?? '', '--', 'sh', '-c'],
    `${request} | nc -w 10 ${b.status?.podIP ?? ''} 8080`,
  ]);
  assert.match(page, new RegExp(`^${pageOf('1').trim()}$`, 'm'), 'the page of the other pod');
}
