// SPDX-License-Identifier: Apache-2.0
// `npm run demo`: a lab fleet upgraded live, told as a short story. Every step checks what
// happened and the demo exits non-zero if anything differs from what it announced.
//
//   0. (only while this machine builds Kubernetes for the first time, in the background) one
//      machine without Kubernetes: discovery, signatures, an A/B upgrade and rollback;
//   1. `molt lab up`: a registry, a Kubernetes control plane whose nodes are the lab machines (with
//      workloads under PodDisruptionBudgets), 3 control-plane and 3 worker machines, the operator;
//   2. every machine runs 1.0.0;
//   3. 1.1.0 on `stable` and `beta`: control plane first, one at a time; workers after a canary,
//      a third at a time — progress shown as it happens;
//   4. a broken 1.2.0 (boots, never healthy) on `beta`, which the workers follow: the canary rolls
//      back by itself and the rollout halts, with the reason;
//   5. (with Kubernetes) a container image two Deployments run is rebuilt: an ImagePolicy moves
//      them to the new digest, the canary first, without rebooting a machine (demo-images.ts);
//   6. the lab stays up (unless --down): the dashboard URL and commands to explore.
//
// Flags: --fast (2 workers, short soaks), --down (stop the lab at the end), --no-kubernetes,
// --network auto|netns|loopback (auto: a namespace per machine when root), --dir DIR (default
// .molt/lab). `npm run demo -- --basics` runs the earlier single-machine story
// (release discovery, signatures, one machine's A/B upgrade and rollback); `npm run demo -- --vm`
// two real VMs that are real Kubernetes nodes (containerd, kubelet, pods under PDBs) upgraded live
// by the operator, then a release whose kernel panics; with --no-kubernetes one VM (demo-vm.ts).
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { labDown, labUp } from '../src/lab/commands.ts';
import { labPublish } from '../src/lab/publish.ts';
import { readLabState, signInLine, type LabState } from '../src/lab/state.ts';
import type { MachineView } from '../src/protocol/operator.ts';
import { describeError } from '../src/cli/errors.ts';
import { kubeBinaries } from '../src/platform/kube/binaries.ts';
import { basicsStory } from './demo-basics.ts';
import { parseDemoFlags, type DemoFlags } from './demo-flags.ts';
import { imageRebuild } from './demo-images.ts';
import { api, follow, kubectl } from './demo-progress.ts';
import { bold, dim, red, started, check, demoIo, failures } from './demo-terminal.ts';

const io = demoIo;

async function machines(lab: LabState): Promise<MachineView[]> {
  return api<MachineView[]>(lab, '/v1/machines');
}

/** The machines once the operator has observed every one (at most 30 s). */
async function observedAll(lab: LabState): Promise<MachineView[]> {
  for (let i = 0; ; i++) {
    const all = await machines(lab);
    if (all.every((m) => m.observed?.version !== undefined) || i >= 60) return all;
    await sleep(500);
  }
}

async function showNodes(lab: LabState): Promise<void> {
  if (lab.kubeconfig === undefined) return;
  const columns = [
    'NODE:.metadata.name',
    'READY:.status.conditions[?(@.type=="Ready")].status',
    'MOLT:.metadata.labels.molt\\.dev/version',
    'CORDONED:.spec.unschedulable',
  ].join(',');
  const out = await kubectl(lab, 'get', 'nodes', '-o', `custom-columns=${columns}`);
  if (out !== '') console.log(dim(out.trimEnd().replace(/^/gm, '    ')));
}

async function baseline(lab: LabState): Promise<void> {
  console.log(bold('\n2. Every machine runs release 1.0.0 (installed into slot A at first boot):'));
  // The operator's first look at each agent may still be under way.
  const before = await observedAll(lab);
  for (const m of before)
    console.log(
      `    ${m.id.padEnd(6)} ${m.role.padEnd(14)} pool ${m.pool.padEnd(14)} ${m.observed?.version ?? '?'}`,
    );
  check(
    before.length >= 5 && before.every((m) => m.observed?.version === '1.0.0'),
    `all ${String(before.length)} machines run 1.0.0`,
  );
  await showNodes(lab);
}

async function rollout(lab: LabState): Promise<void> {
  console.log(
    bold('\n3. Release 1.1.0 is published to `stable` and `beta`; the operator discovers it:'),
  );
  await labPublish(lab.dir, { version: '1.1.0', channels: 'stable,beta', broken: false }, io);
  const rs = await follow(
    lab,
    '1.1.0',
    (x) => x.length === 2 && x.every((r) => r.state === 'Completed'),
    15 * 60_000,
  );
  check(rs.length === 2 && rs.every((r) => r.state === 'Completed'), 'both pools completed 1.1.0');
  const cp = rs.find((r) => r.pool === 'control-plane');
  const workers = rs.find((r) => r.pool === 'workers');
  const cpDone = Math.max(...(cp?.machines ?? []).map((m) => Date.parse(m.finishedAt ?? '')));
  const workersFrom = Math.min(
    ...(workers?.machines ?? []).map((m) => Date.parse(m.startedAt ?? '')),
  );
  check(cpDone <= workersFrom, 'the control plane finished before any worker started');
  const after = await machines(lab);
  check(
    after.every((m) => m.observed?.version === '1.1.0'),
    'every machine now boots 1.1.0 (committed in slot B)',
  );
  await showNodes(lab);
}

async function brokenRelease(lab: LabState): Promise<void> {
  console.log(
    bold(
      '\n4. A broken 1.2.0 (boots, never becomes healthy) goes to `beta`, which the workers follow:',
    ),
  );
  await labPublish(lab.dir, { version: '1.2.0', channels: 'beta', broken: true }, io);
  const [broken] = await follow(lab, '1.2.0', (x) => x[0]?.state === 'Halted', 10 * 60_000);
  check(broken?.state === 'Halted', 'the rollout halted');
  const touched = (broken?.machines ?? []).filter((m) => m.phase !== 'Pending');
  check(
    touched.length === 1 && touched[0]?.phase === 'RolledBack',
    'only the canary started, and it rolled back by itself',
  );
  console.log(
    `    reason: ${touched[0]?.machine ?? '?'} — ${touched[0]?.reason ?? 'no reason recorded'}`,
  );
  const final = await machines(lab);
  check(
    final.every((m) => m.observed?.version === '1.1.0'),
    'every machine is still on 1.1.0',
  );
}

function explore(lab: LabState): void {
  console.log(bold(`\n${lab.kubeconfig === undefined ? '5' : '6'}. Explore:`));
  console.log(`    dashboard        ${lab.operator.dashboard}`);
  const signIn = signInLine(lab);
  if (signIn !== undefined) console.log(`                     ${signIn}`);
  // `molt lab up` wrote the CLI context `lab`: no variables to export.
  console.log('    npm run -s molt -- rollout list            # the lab context: no variables');
  console.log('    npm run -s molt -- rollout status <id-prefix> --follow');
  const worker = lab.machines.find((m) => m.role === 'worker');
  if (worker !== undefined)
    console.log(
      `    npm run -s molt -- node events ${worker.id} --follow   # its journal, live (found by name)`,
    );
  console.log('    npm run -s molt -- history --follow | plan | lab status | lab down');
  if (lab.kubectl !== undefined && lab.kubeconfig !== undefined) {
    console.log(
      '    npm run -s molt -- lab kubectl get molt -n molt-system   # edit pool workers, too',
    );
    console.log('    npm run -s molt -- images list | images status   # the followed images');
  }
}

/** Step 1: `molt lab up` (after stopping a lab an earlier run left up), checked. */
async function upLab(flags: DemoFlags): Promise<LabState> {
  const { dir } = flags;
  if ((await readLabState(dir)) !== undefined) {
    console.log(dim(`  a lab from an earlier run is up in ${dir}: stopping it first`));
    await labDown(dir, io);
  }
  const lab = await labUp(
    {
      dir,
      workers: flags.fast ? 2 : 3,
      vms: 0,
      kubernetes: flags.kubernetes,
      fast: flags.fast,
      dashboardPort: 0,
      network: flags.network,
      // The demo runs molt from this checkout's sources (Node strips the types).
      molt: [process.execPath, join(import.meta.dirname, '../src/bin/molt.ts')],
    },
    io,
  );
  check(
    lab.machines.length === (flags.fast ? 5 : 6),
    `${String(lab.machines.length)} lab machines, a registry and the operator are up`,
  );
  if (lab.network?.mode === 'netns') {
    const hosts = lab.machines.map((m) => new URL(m.endpoint).hostname);
    check(
      new Set(hosts).size === hosts.length,
      `each machine in a network namespace of its own, at its own address (${hosts.join(', ')}) on ${lab.network.subnet ?? '?'}`,
    );
  }
  return lab;
}

/**
 * The lab's Kubernetes, built from the Go module proxy the first time on a machine (about 20 min
 * on two cores): built in the background while chapter 0 — discovery and one machine's A/B
 * upgrade and rollback, no Kubernetes needed — shows molt at work within the first minutes. A
 * build that is cached answers at once, and there is no chapter 0.
 */
async function whileKubernetesBuilds(flags: DemoFlags): Promise<void> {
  if (!flags.kubernetes) return;
  let latest = '';
  const build = kubeBinaries((line) => (latest = line));
  const cached = await Promise.race([build.then(() => true), sleep(5000).then(() => false)]);
  if (cached) return;
  console.log(bold('0. While Kubernetes builds, molt without it:'));
  console.log(
    dim(
      '  This machine has not built Kubernetes yet: it is compiled from the Go module proxy in the\n' +
        '  background (once; about 20 min on 2 cores). Meanwhile: releases in a real registry,\n' +
        '  their signatures, and one lab machine upgraded through its A/B slots and rolled back.\n',
    ),
  );
  if ((await basicsStory({ chapter: true })) !== 0) failures.push('chapter 0: not as described');
  console.log(bold('  Waiting for the Kubernetes build to finish:'));
  if (latest !== '') console.log(dim(`  ${latest}`));
  const shown = setInterval(() => {
    console.log(dim(`  ${latest}`));
  }, 60_000);
  try {
    check((await build) !== '', 'Kubernetes is built (later runs use it at once)');
  } finally {
    clearInterval(shown);
  }
}

async function main(): Promise<number> {
  // Every flag is checked before anything is touched (a lab already running included).
  const flags = await parseDemoFlags(process.argv.slice(2));
  if (flags.basics) return basicsStory();
  if (flags.vm) {
    const { vmStory } = await import('./demo-vm.ts');
    return vmStory({
      dir: flags.dir,
      down: flags.down,
      network: flags.network,
      kubernetes: flags.kubernetes,
      cluster: flags.cluster,
    });
  }
  console.log(bold('molt — a lab fleet upgraded live\n'));
  await whileKubernetesBuilds(flags);
  console.log(bold('1. Start a lab (molt lab up):'));
  const { dir } = flags;
  const lab = await upLab(flags);
  try {
    await baseline(lab);
    await rollout(lab);
    await brokenRelease(lab);
    await imageRebuild(lab);
  } catch (e) {
    failures.push(String(e));
    console.log(red(`  ✘ ${String(e)}`));
  }
  explore(lab);
  if (flags.down) await labDown(dir, io);
  else console.log(dim(`\n  The lab keeps running in ${dir} until \`molt lab down\`.`));
  if (failures.length > 0) {
    console.error(
      red(`\ndemo FAILED: ${String(failures.length)} step(s) did not happen as described`),
    );
    return 1;
  }
  console.log(
    bold(
      `\nEvery step happened as described (${String(Math.round((performance.now() - started) / 1000))} s).`,
    ),
  );
  return 0;
}

// A MoltError (a bad flag, a lab that did not come up) is its code, message and hint, as molt
// prints them; only a bug in the demo keeps its stack.
process.exitCode = await main().catch((e: unknown) => {
  process.stderr.write(describeError(e));
  return 1;
});
