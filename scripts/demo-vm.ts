// SPDX-License-Identifier: Apache-2.0
// `npm run demo -- --vm` (docs/adr/0015): real VMs that are real Kubernetes nodes,
// upgraded live by the operator, told as a short story. Every step checks what happened; the demo
// exits non-zero if anything differs.
//
//   1. `molt lab up --vms 2 --workers 0`: a registry, a Kubernetes control plane, the three
//      control-plane lab machines whose etcd holds the operator's state, two VMs — OVMF, a real
//      bootloader and a Debian kernel booting a disk `molt install` wrote — and the operator; every
//      machine on the real OS release 1.0.0 built by `molt image build`;
//   2. the VMs booted 1.0.0 from slot A, and joined the cluster as nodes (TLS bootstrap):
//      containerd 2 and 1.0.0's kubelet (the previous minor) — `kubectl get nodes -o wide`;
//   3. the lab's workloads (shop/web, 6 under a PDB of minAvailable 5; shop/db, 3 under 2) run as
//      containerd containers on them;
//   4. `molt lab publish 1.1.0 --vm` (the current kubelet): the operator upgrades the VMs, canary
//      first — each cordoned, drained through the budgets (the pods move to the other VM), really
//      rebooted (NotReady), Ready on the new kubelet, uncordoned — watched every second, shown as
//      a timeline; the consoles show the new release booting from slot B;
//   5. `molt lab publish 1.2.0 --vm --broken`: its kernel panics, the bootloader falls back to
//      1.1.0, the agent says why, the node is Ready and uncordoned again, the operator halts;
//   6. the lab stays up (unless --down).
// `--vm --cluster`: the operator runs as pods on the two VMs (`molt lab up --operator cluster`),
// shown after step 3; step 4 drains the nodes it runs on, and its Lease changes hands.
// `--vm --no-kubernetes` tells the same story with one VM and no nodes (steps 2, 4 and 5 only).
import { join } from 'node:path';
import { labDown, labUp } from '../src/lab/commands.ts';
import { agentStatus } from '../src/lab/fleet/machine.ts';
import type { NetworkMode } from '../src/lab/fleet/network.ts';
import { labPublish } from '../src/lab/publish.ts';
import { readLabState, signInLine, type LabState, type LabVmRecord } from '../src/lab/state.ts';
import { serialSize, waitForSerial } from '../src/lab/vm/serial-log.ts';
import type { AgentStatus } from '../src/protocol/agent.ts';
import type { MachineView, RolloutView } from '../src/protocol/operator.ts';
import { api, follow } from './demo-progress.ts';
import { showOperatorPods, watchUpgrade } from './demo-vm-cluster.ts';
import { excerpt, showConsole } from './demo-vm-console.ts';
import { bold, dim, elapsed, red, started, check, demoIo, failures } from './demo-terminal.ts';
import {
  checkNodesSeen,
  Kubelet,
  showNodes,
  showPods,
  showTimeline,
  watchNodes,
} from './demo-vm-nodes.ts';

const molt = [process.execPath, join(import.meta.dirname, '../src/bin/molt.ts')];
const io = demoIo;
/** A VM release's build progress, dimmed and indented. */
const buildLog = (line: string): void => {
  console.log(dim(`    ${elapsed()} ${line}`));
};
let stepNo = 0;
const step = (title: string): void => {
  stepNo += 1;
  console.log(bold(`\n${String(stepNo)}. ${title}`));
};

/** A rollout that went as far as it will without a person: no use following it further. */
const stopped = (rs: readonly RolloutView[]): boolean =>
  ['Completed', 'Halted', 'RolledBack', 'Superseded', 'Cancelled'].includes(rs[0]?.state ?? '');

async function status(lab: LabState, vm: LabVmRecord): Promise<AgentStatus> {
  return agentStatus({ dir: lab.pki, operatorEnv: {} }, vm.endpoint);
}

/** The VMs whose first boot GRUB announced on the console (the others boot with systemd-boot). */
const grubVms = new Set<string>();

async function baseline(lab: LabState, vms: readonly LabVmRecord[]): Promise<void> {
  step(
    `The VM${vms.length > 1 ? 's' : ''} booted release 1.0.0 from slot A of the disk molt installed:`,
  );
  const all = await api<MachineView[]>(lab, '/v1/machines');
  for (const vm of vms) {
    const lines = await excerpt(vm, 0);
    if (lines.some((l) => l.startsWith('Booting `molt'))) grubVms.add(vm.name);
    showConsole(vm, lines);
    const s = await status(lab, vm);
    check(
      s.bootedSlot === 'A' && s.version === '1.0.0' && s.boot.committed === 'A',
      `${vm.name}'s agent: slot ${s.bootedSlot}, release ${s.version ?? '?'}, committed ${s.boot.committed ?? '-'}`,
    );
    const seen = all.find((m) => m.id === vm.name);
    check(seen?.pool === 'vms', `the operator has ${vm.name} in pool ${seen?.pool ?? '?'}`);
  }
}

/** Each VM's console since `from[i]`: booted 1.1.0 from slot B (GRUB's line too, under GRUB). */
async function bootedNew(lab: LabState, vm: LabVmRecord, from: number): Promise<void> {
  await waitForSerial(vm.serialLog, /MOLT-BOOTED slot=B version=1\.1\.0/, {
    name: vm.name,
    from,
    deadlineMs: 60_000,
  }).catch(() => undefined);
  const lines = await excerpt(vm, from);
  showConsole(vm, lines);
  if (grubVms.has(vm.name))
    check(
      lines.some((l) => l.includes("Booting `molt 1.1.0 (slot B)'")),
      `${vm.name}: GRUB booted the other slot: molt 1.1.0 (slot B)`,
    );
  check(
    lines.some((l) => l.includes('MOLT-BOOTED slot=B version=1.1.0')),
    `${vm.name}: the new kernel and root booted from slot B (MOLT-BOOTED slot=B version=1.1.0)`,
  );
  const s = await status(lab, vm);
  check(
    s.bootedSlot === 'B' && s.version === '1.1.0' && s.boot.committed === 'B',
    `${vm.name}'s agent committed slot B (${s.version ?? '?'}; ${s.slots.map((x) => `${x.slot} ${x.version ?? '-'} ${x.status}`).join(', ')})`,
  );
}

async function upgrade(
  lab: LabState,
  vms: readonly LabVmRecord[],
  o: { nodes: boolean; cluster: boolean },
): Promise<void> {
  step(
    o.nodes
      ? `Release 1.1.0 (molt image build, kubelet ${Kubelet.after}) goes to channel \`vm\`; the operator rolls it, canary first:`
      : 'Release 1.1.0 (molt image build) goes to channel `vm`; the operator rolls it:',
  );
  const from = await Promise.all(vms.map((vm) => serialSize(vm.serialLog)));
  const watch = await watchUpgrade(
    lab,
    vms.map((v) => v.name),
    o,
  );
  await labPublish(lab.dir, { version: '1.1.0', broken: false, vm: true, molt, log: buildLog }, io);
  const [r] = await follow(lab, '1.1.0', stopped, 40 * 60_000);
  check(r?.state === 'Completed', `rollout ${r?.id ?? '?'}: ${r?.state ?? 'none'}`);
  await watch.stop();
  for (const [i, vm] of vms.entries()) await bootedNew(lab, vm, from[i] ?? 0);
}

async function broken(lab: LabState, vms: readonly LabVmRecord[], nodes: boolean): Promise<void> {
  step('A broken 1.2.0 (its kernel panics at boot) goes to channel `vm`:');
  const from = await Promise.all(vms.map((vm) => serialSize(vm.serialLog)));
  const names = vms.map((v) => v.name);
  const watch = nodes ? await watchNodes(lab, names) : undefined;
  await labPublish(lab.dir, { version: '1.2.0', broken: true, vm: true, molt, log: buildLog }, io);
  const [r] = await follow(lab, '1.2.0', stopped, 30 * 60_000);
  const i = vms.findIndex((vm) =>
    r?.machines.some((m) => m.machine === vm.name && m.phase !== 'Pending'),
  );
  const vm = vms[i] ?? vms[0];
  if (vm === undefined) throw new Error('the lab has no VM');
  // The fallen-back node comes back Ready and uncordoned after its agent reported the rollback.
  await watch?.until(
    (l) => l.nodes[vm.name]?.ready === true && l.nodes[vm.name]?.cordoned === false,
    120_000,
  );
  const seen = await watch?.stop();
  const lines = await excerpt(vm, from[i] ?? 0);
  showConsole(vm, lines);
  check(
    lines.some((l) => l.includes('Kernel panic')),
    `the kernel of 1.2.0 panicked on ${vm.name}, and its bootloader fell back`,
  );
  check(
    lines.at(-1)?.includes('MOLT-BOOTED slot=B version=1.1.0') === true,
    `${vm.name} is back on 1.1.0 from slot B`,
  );
  agentSaysWhy(await status(lab, vm));
  operatorHalted(vm, r);
  if (seen !== undefined) {
    showTimeline(seen.looks);
    checkNodesSeen(seen, [vm.name], Kubelet.after);
  }
}

/** What the agent says after the broken release: the rollback, and why. */
function agentSaysWhy(s: AgentStatus): void {
  const bad = s.slots.find((x) => x.slot === 'A');
  const why = bad?.badReason ?? s.last?.reason ?? '?';
  check(
    s.last?.result === 'RolledBack' && bad?.status === 'bad',
    `its agent reports the rollback (${s.last?.result ?? '?'}): ${why}`,
  );
}

/** What the operator says: the rollout halted at the VM that rolled back, the only one started. */
function operatorHalted(vm: LabVmRecord, r: RolloutView | undefined): void {
  const machines = r?.machines ?? [];
  const m = machines.find((x) => x.machine === vm.name);
  const others = machines.filter((x) => x.machine !== vm.name && x.phase !== 'Pending');
  const what =
    m === undefined ? `${vm.name} ?` : `${vm.name} ${m.phase} (${m.reason ?? 'no reason'})`;
  const halted = r?.state === 'Halted' && m?.phase === 'RolledBack';
  check(
    halted && others.length === 0,
    `the operator halted rollout ${r?.id ?? '?'} at its canary: ${what}`,
  );
}

async function upLab(
  o: { dir: string; network: NetworkMode; kubernetes: boolean; cluster: boolean },
  count: number,
): Promise<LabState> {
  if ((await readLabState(o.dir)) !== undefined) {
    console.log(dim(`  a lab from an earlier run is up in ${o.dir}: stopping it first`));
    await labDown(o.dir, io);
  }
  const lab = await labUp(
    {
      ...{ dir: o.dir, workers: 0, vms: count, kubernetes: o.kubernetes, fast: true },
      ...{ dashboardPort: 0, network: o.network, molt },
      operator: o.cluster ? ('cluster' as const) : ('host' as const),
    },
    io,
  );
  check(
    lab.vms?.length === count,
    `${String(count)} VM${count > 1 ? 's' : ''} (${lab.vms?.[0]?.accel ?? '?'}), 3 lab machines, ${o.kubernetes ? 'a Kubernetes control plane, ' : ''}a registry and the operator are up`,
  );
  return lab;
}

/** The Kubernetes steps before the upgrade: the Nodes, then the pods on them. */
async function realNodes(lab: LabState, vms: readonly LabVmRecord[]): Promise<void> {
  const names = vms.map((v) => v.name);
  step(
    'They joined the lab’s cluster as Kubernetes nodes (TLS bootstrap), containerd 2 and 1.0.0’s kubelet:',
  );
  await showNodes(lab, names, Kubelet.before);
  step(
    'The lab’s workloads run as containers on them (shop/web under a PDB of minAvailable 5, shop/db of 2):',
  );
  await showPods(lab, names);
}

function explore(lab: LabState, vms: readonly LabVmRecord[]): void {
  step('Explore:');
  console.log(`    dashboard        ${lab.operator.dashboard}`);
  const signIn = signInLine(lab);
  if (signIn !== undefined) console.log(`                     ${signIn}`);
  console.log('    eval "$(npm run -s molt -- lab env)"; npm run -s molt -- rollout list');
  if (lab.kubeconfig !== undefined)
    console.log('    npm run -s molt -- lab kubectl get nodes,pods -A -o wide');
  for (const vm of vms) console.log(`    tail -f ${vm.serialLog}   # ${vm.name}'s console`);
  console.log('    npm run -s molt -- lab status | lab down');
}

/** The story; resolves with the exit code. */
export async function vmStory(o: {
  dir: string;
  down: boolean;
  network: NetworkMode;
  kubernetes: boolean;
  /** The operator as pods on the VM nodes (`molt lab up --operator cluster`). */
  cluster: boolean;
}): Promise<number> {
  const count = o.kubernetes ? 2 : 1;
  console.log(
    bold(
      o.kubernetes
        ? 'molt — real VMs, real Kubernetes nodes, upgraded live by the operator'
        : 'molt — a real VM upgraded live by the operator',
    ),
  );
  step(
    o.cluster
      ? 'Start a lab with two VM nodes and the operator inside the cluster (molt lab up --vms 2 --workers 0 --operator cluster):'
      : o.kubernetes
        ? 'Start a lab with two VM nodes (molt lab up --vms 2 --workers 0):'
        : 'Start a lab with one VM (molt lab up --vms 1 --workers 0 --no-kubernetes):',
  );
  const lab = await upLab(o, count);
  const vms = lab.vms ?? [];
  try {
    if (vms.length === 0) throw new Error('the lab has no VM');
    await baseline(lab, vms);
    if (o.kubernetes) await realNodes(lab, vms);
    if (o.cluster) {
      step(
        'The operator runs inside that cluster: its image built by molt, applied with kubectl apply -k, two replicas on the VMs:',
      );
      await showOperatorPods(lab, vms);
    }
    await upgrade(lab, vms, { nodes: o.kubernetes, cluster: o.cluster });
    await broken(lab, vms, o.kubernetes);
  } catch (e) {
    failures.push(String(e));
    console.log(red(`  ✘ ${String(e)}`));
  }
  explore(lab, vms);
  if (o.down) await labDown(o.dir, io);
  else console.log(dim(`\n  The lab keeps running in ${o.dir} until \`molt lab down\`.`));
  const seconds = Math.round((performance.now() - started) / 1000);
  if (failures.length > 0) {
    console.error(
      red(`\ndemo FAILED: ${String(failures.length)} step(s) did not happen as described`),
    );
    return 1;
  }
  console.log(bold(`\nEvery step happened as described (${String(seconds)} s).`));
  return 0;
}
