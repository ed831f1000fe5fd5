// SPDX-License-Identifier: Apache-2.0
// `npm run demo -- --vm` (issue 15 §2): one real VM upgraded live by the operator, told as a short
// story. Every step checks what happened; the demo exits non-zero if anything differs.
//
//   1. `molt lab up --vms 1 --workers 0 --no-kubernetes`: a registry, the three control-plane lab
//      machines whose etcd holds the operator's state, one VM — OVMF, GRUB and a Debian kernel
//      booting a disk `molt install` wrote — and the operator; every machine on the real OS
//      release 1.0.0 built by `molt image build`;
//   2. `molt lab publish 1.1.0 --vm`: the operator upgrades the VM; its console shows GRUB booting
//      the other slot and the new release's boot marker;
//   3. `molt lab publish 1.2.0 --vm --broken`: its kernel panics, GRUB falls back to 1.1.0, the agent
//      says why, and the operator halts the rollout;
//   4. the lab stays up (unless --down).
import { join } from 'node:path';
import { labDown, labUp } from '../src/lab/commands.ts';
import { agentStatus } from '../src/lab/fleet/machine.ts';
import type { NetworkMode } from '../src/lab/fleet/network.ts';
import { labPublish } from '../src/lab/publish.ts';
import { readLabState, signInLine, type LabState, type LabVmRecord } from '../src/lab/state.ts';
import { logTail, readSerial, serialSize, waitForSerial } from '../src/lab/vm/serial-log.ts';
import type { AgentStatus } from '../src/protocol/agent.ts';
import type { MachineView, RolloutView } from '../src/protocol/operator.ts';
import { api, follow } from './demo-progress.ts';
import { bold, dim, elapsed, red, started, check, demoIo, failures } from './demo-terminal.ts';

const molt = [process.execPath, join(import.meta.dirname, '../src/bin/molt.ts')];
const io = demoIo;
/** A VM release's build progress, dimmed and indented. */
const buildLog = (line: string): void => {
  console.log(dim(`    ${elapsed()} ${line}`));
};

/** The console lines since `from` that tell the boot story (bootloader, panic, boot marker). */
async function excerpt(vm: LabVmRecord, from: number): Promise<string[]> {
  const text = logTail(await readSerial(vm.serialLog, from), 1_000_000);
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) =>
      /Booting `molt|MOLT-BOOTED|Kernel panic|Rebooting in|=== molt vm: power on/.test(l),
    )
    .map((l) => l.replace(/ boot=\S+ uptime=\S+$/, ''));
}

function showConsole(vm: LabVmRecord, lines: readonly string[]): void {
  console.log(dim(`    ${vm.name}'s console (${vm.serialLog}):`));
  for (const l of lines) console.log(`      ${l}`);
}

async function status(lab: LabState, vm: LabVmRecord): Promise<AgentStatus> {
  return agentStatus({ dir: lab.pki, operatorEnv: {} }, vm.endpoint);
}

async function baseline(lab: LabState, vm: LabVmRecord): Promise<void> {
  console.log(bold('\n2. The VM booted release 1.0.0 from slot A of the disk molt installed:'));
  showConsole(vm, await excerpt(vm, 0));
  const s = await status(lab, vm);
  check(
    s.bootedSlot === 'A' && s.version === '1.0.0' && s.boot.committed === 'A',
    `its agent: slot ${s.bootedSlot}, release ${s.version ?? '?'}, committed ${s.boot.committed ?? '-'}`,
  );
  const all = await api<MachineView[]>(lab, '/v1/machines');
  const seen = all.find((m) => m.id === vm.name);
  check(seen?.pool === 'vms', `the operator has ${vm.name} in pool ${seen?.pool ?? '?'}`);
}

async function upgrade(lab: LabState, vm: LabVmRecord): Promise<void> {
  console.log(
    bold('\n3. Release 1.1.0 (molt image build) goes to channel `vm`; the operator rolls it:'),
  );
  const from = await serialSize(vm.serialLog);
  await labPublish(lab.dir, { version: '1.1.0', broken: false, vm: true, molt, log: buildLog }, io);
  const [r] = await follow(lab, '1.1.0', (x) => x[0]?.state === 'Completed', 20 * 60_000);
  check(r?.state === 'Completed', `rollout ${r?.id ?? '?'}: ${r?.state ?? 'none'}`);
  await waitForSerial(vm.serialLog, /MOLT-BOOTED slot=B version=1\.1\.0/, {
    name: vm.name,
    from,
    deadlineMs: 60_000,
  }).catch(() => undefined);
  const lines = await excerpt(vm, from);
  showConsole(vm, lines);
  check(
    lines.some((l) => l.includes("Booting `molt 1.1.0 (slot B)'")),
    'GRUB booted the other slot: molt 1.1.0 (slot B)',
  );
  check(
    lines.some((l) => l.includes('MOLT-BOOTED slot=B version=1.1.0')),
    'the new kernel and root booted from slot B (MOLT-BOOTED slot=B version=1.1.0)',
  );
  const s = await status(lab, vm);
  check(
    s.bootedSlot === 'B' && s.version === '1.1.0' && s.boot.committed === 'B',
    `its agent committed slot B (${s.version ?? '?'}; ${s.slots.map((x) => `${x.slot} ${x.version ?? '-'} ${x.status}`).join(', ')})`,
  );
}

async function broken(lab: LabState, vm: LabVmRecord): Promise<void> {
  console.log(bold('\n4. A broken 1.2.0 (its kernel panics at boot) goes to channel `vm`:'));
  const from = await serialSize(vm.serialLog);
  await labPublish(lab.dir, { version: '1.2.0', broken: true, vm: true, molt, log: buildLog }, io);
  const [r] = await follow(lab, '1.2.0', (x) => x[0]?.state === 'Halted', 20 * 60_000);
  const lines = await excerpt(vm, from);
  showConsole(vm, lines);
  check(
    lines.some((l) => l.includes('Kernel panic')),
    'the kernel of 1.2.0 panicked, and GRUB fell back',
  );
  check(
    lines.at(-1)?.includes('MOLT-BOOTED slot=B version=1.1.0') === true,
    'the VM is back on 1.1.0 from slot B',
  );
  agentSaysWhy(await status(lab, vm));
  operatorHalted(vm, r);
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

/** What the operator says: the rollout halted at the VM that rolled back. */
function operatorHalted(vm: LabVmRecord, r: RolloutView | undefined): void {
  const m = r?.machines.find((x) => x.machine === vm.name);
  const what = `${vm.name} ${m?.phase ?? '?'} (${m?.reason ?? 'no reason'})`;
  check(
    r?.state === 'Halted' && m?.phase === 'RolledBack',
    `the operator halted rollout ${r?.id ?? '?'}: ${what}`,
  );
}

async function upLab(dir: string, network: NetworkMode): Promise<LabState> {
  if ((await readLabState(dir)) !== undefined) {
    console.log(dim(`  a lab from an earlier run is up in ${dir}: stopping it first`));
    await labDown(dir, io);
  }
  const lab = await labUp(
    {
      dir,
      workers: 0,
      vms: 1,
      kubernetes: false,
      fast: true,
      dashboardPort: 0,
      network,
      molt,
    },
    io,
  );
  check(
    lab.vms?.length === 1,
    `a VM (${lab.vms?.[0]?.accel ?? '?'}), 3 lab machines, a registry and the operator are up`,
  );
  return lab;
}

/** The story; resolves with the exit code. */
export async function vmStory(o: {
  dir: string;
  down: boolean;
  network: NetworkMode;
}): Promise<number> {
  console.log(bold('molt — a real VM upgraded live by the operator\n'));
  console.log(
    bold('1. Start a lab with one VM (molt lab up --vms 1 --workers 0 --no-kubernetes):'),
  );
  const lab = await upLab(o.dir, o.network);
  const vm = lab.vms?.[0];
  try {
    if (vm === undefined) throw new Error('the lab has no VM');
    await baseline(lab, vm);
    await upgrade(lab, vm);
    await broken(lab, vm);
  } catch (e) {
    failures.push(String(e));
    console.log(red(`  ✘ ${String(e)}`));
  }
  console.log(bold('\n5. Explore:'));
  console.log(`    dashboard        ${lab.operator.dashboard}`);
  const signIn = signInLine(lab);
  if (signIn !== undefined) console.log(`                     ${signIn}`);
  console.log('    eval "$(npm run -s molt -- lab env)"; npm run -s molt -- rollout list');
  if (vm !== undefined) console.log(`    tail -f ${vm.serialLog}   # the VM's console`);
  console.log('    npm run -s molt -- lab status | lab down');
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
