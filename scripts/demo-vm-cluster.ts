// SPDX-License-Identifier: Apache-2.0
// `npm run demo -- --vm --cluster`'s own steps (demo-vm.ts tells the rest): the operator as pods
// on the VM nodes it upgrades (`molt lab up --operator cluster`, docs/adr/0018), and who held its
// Lease while the rollout drained the nodes it ran on.
import { setTimeout as sleep } from 'node:timers/promises';
import type { LabState } from '../src/lab/state.ts';
import { kubectl } from './demo-progress.ts';
import { checkNodesSeen, Kubelet, showTimeline, watchNodes } from './demo-vm-nodes.ts';
import { check, dim } from './demo-terminal.ts';

const Namespace = 'molt-system';
const Selector = 'app.kubernetes.io/name=molt-operator';

const indent = (text: string): string =>
  text
    .trimEnd()
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');

async function holder(lab: LabState): Promise<string> {
  const out = await kubectl(
    lab,
    ...['-n', Namespace, 'get', 'lease', 'molt-operator', '-o', 'jsonpath={.spec.holderIdentity}'],
  ).catch(() => '');
  return out.trim();
}

/** `kubectl get pods -n molt-system -o wide` and the Lease, checked: two Ready on the VMs, one leading. */
export async function showOperatorPods(
  lab: LabState,
  vms: readonly { readonly name: string }[],
): Promise<void> {
  const names = vms.map((v) => v.name);
  console.log(indent(await kubectl(lab, '-n', Namespace, 'get', 'pods', '-o', 'wide')));
  const pods = JSON.parse(
    await kubectl(lab, '-n', Namespace, 'get', 'pods', '-l', Selector, '-o', 'json'),
  ) as {
    items: {
      metadata: { name: string };
      spec: { nodeName?: string };
      status: { conditions?: { type: string; status: string }[] };
    }[];
  };
  const ready = pods.items.filter(
    (p) =>
      names.includes(p.spec.nodeName ?? '') &&
      (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
  );
  check(ready.length === 2, `${String(ready.length)} of 2 operator replicas Ready on the VMs`);
  const leads = await holder(lab);
  const leader = ready.find((p) => leads.startsWith(`${p.metadata.name}-`));
  check(
    leader !== undefined,
    `${leads === '' ? 'nobody' : leads} holds the Lease molt-system/molt-operator${leader === undefined ? '' : `, on ${leader.spec.nodeName ?? '?'}`}`,
  );
}

export interface LeaseWatch {
  /** Stop; the holders in the order they held the Lease. */
  stop(): Promise<string[]>;
}

/** Note the Lease's holder every two seconds. */
export function watchLease(lab: LabState): LeaseWatch {
  const holders: string[] = [];
  const on = { value: true };
  const loop = (async () => {
    while (on.value) {
      const h = await holder(lab);
      if (h !== '' && holders.at(-1) !== h) {
        holders.push(h);
        if (holders.length > 1) console.log(dim(`    the Lease passes to ${h}`));
      }
      await sleep(2_000);
    }
  })();
  return {
    async stop() {
      on.value = false;
      await loop;
      return holders;
    },
  };
}

/** The check after the rollout: the operator's own nodes drained, its Lease handed over. */
function checkHandover(holders: readonly string[]): void {
  check(
    holders.length >= 2,
    `the operator upgraded the nodes it runs on; its Lease changed hands as they drained: ${holders.join(' → ')}`,
  );
}

/**
 * What the upgrade step watches: the Nodes every second (with Kubernetes), the Lease (with the
 * operator in the cluster); `stop` shows the timeline and checks both.
 */
export async function watchUpgrade(
  lab: LabState,
  names: readonly string[],
  o: { readonly nodes: boolean; readonly cluster: boolean },
): Promise<{ stop(): Promise<void> }> {
  const nodes = o.nodes ? await watchNodes(lab, names) : undefined;
  const lease = o.cluster ? watchLease(lab) : undefined;
  return {
    async stop() {
      const seen = await nodes?.stop();
      if (seen !== undefined) {
        showTimeline(seen.looks);
        checkNodesSeen(seen, names, Kubelet.after);
      }
      const holders = await lease?.stop();
      if (holders !== undefined) checkHandover(holders);
    },
  };
}
