// SPDX-License-Identifier: Apache-2.0
/**
 * `molt lab machine`: plays firmware and bootloader for one lab machine (docs/adr/0004 §4). Each
 * boot: choose an entry exactly as GRUB or systemd-boot would (with their own writes), "boot" the
 * slot — a missing, unfinished, bad or `lab.boot=fail` slot panics and the machine reboots as
 * `panic=10` would — then run `molt agent` until it asks for a reboot. At a reboot or power cut
 * everything of the boot dies: the agent's process group, and the services it started detached
 * (etcd), found by their PID files in `run/`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { AgentNodeOptions, LabEnv, LabExit } from '../../protocol/agent.ts';
import { bootMachine } from './boot.ts';
import { type BootloaderName } from '../../core/boot/bootloaders.ts';

export interface SupervisorOptions {
  readonly root: string;
  readonly bootloader: BootloaderName;
  /**
   * argv that starts molt (`[node, …/molt.ts]`); the agent's node options go after node, and
   * `agent --root DIR` is appended.
   */
  readonly molt: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly log: (line: string) => void;
  /** Consecutive boots that reach no agent before the machine halts. */
  readonly maxFailedBoots?: number;
}

type BootEnd = 'reboot' | 'power-off' | 'stop';

export interface Supervisor {
  /** Resolves with the exit code when the machine powers off, halts or is stopped. */
  readonly done: Promise<number>;
  /** Kill everything at once and boot again (crash tests). */
  powerCut(): void;
  /** Shut the machine down (agent SIGTERM, then SIGKILL) and stop supervising. */
  stop(): Promise<number>;
}

export function superviseMachine(options: SupervisorOptions): Supervisor {
  const groups = new Set<number>();
  let current: ChildProcess | undefined;
  let stopping = false;
  let cut = false;

  const killGroups = (signal: NodeJS.Signals): void => {
    for (const pgid of groups) {
      try {
        process.kill(-pgid, signal);
      } catch {
        groups.delete(pgid);
      }
    }
  };

  async function runAgent(cmdline: string, bootId: string): Promise<number | 'killed'> {
    const child = spawn(
      options.molt[0] ?? process.execPath,
      [...AgentNodeOptions, ...options.molt.slice(1), 'agent', '--root', options.root],
      {
        env: { ...options.env, [LabEnv.Cmdline]: cmdline, [LabEnv.BootId]: bootId },
        detached: true,
        stdio: 'inherit',
      },
    );
    current = child;
    if (child.pid !== undefined) groups.add(child.pid);
    return new Promise((resolve) => {
      child.on('exit', (code, signal) => {
        current = undefined;
        // Its group may outlive it only through children it left behind; a reused group id must
        // never be signalled, so forget it unless something still runs in it.
        if (child.pid !== undefined && !groupAlive(child.pid)) groups.delete(child.pid);
        resolve(signal === null ? (code ?? 1) : 'killed');
      });
      child.on('error', () => {
        resolve(1);
      });
    });
  }

  /** One power-on: returns how it ended. */
  async function boot(bootNumber: number): Promise<BootEnd | 'failed'> {
    await rm(join(options.root, 'run'), { recursive: true, force: true });
    await mkdir(join(options.root, 'run'), { recursive: true });
    const chosen = await bootMachine(options.root, options.bootloader);
    if (!chosen.ok) {
      options.log(`boot ${bootNumber}: no entry booted: ${chosen.reason}`);
      return 'failed';
    }
    const panic = await slotPanics(options.root, chosen.slot);
    if (panic !== undefined) {
      options.log(
        `boot ${bootNumber}: slot ${chosen.slot} (${chosen.entryId}) failed to boot: ${panic}; rebooting`,
      );
      return 'failed';
    }
    const bootId = randomUUID();
    options.log(`boot ${bootNumber}: slot ${chosen.slot} (${chosen.entryId}), boot id ${bootId}`);
    for (;;) {
      const exit = await runAgent(chosen.cmdline, bootId);
      if (stopping) return 'stop';
      if (cut) return 'reboot';
      if (exit === LabExit.Reboot || exit === LabExit.PowerCut) return 'reboot';
      if (exit === LabExit.PowerOff) return 'power-off';
      // Like systemd's Restart=always: the agent crashed, the machine keeps running.
      options.log(`boot ${bootNumber}: agent exited (${String(exit)}); restarting it`);
      await sleep(500);
    }
  }

  async function loop(): Promise<number> {
    let failed = 0;
    for (let n = 1; ; n += 1) {
      cut = false;
      const end = await boot(n);
      killGroups('SIGKILL');
      groups.clear();
      await killPidFiles(options.root);
      if (end === 'stop') return 0;
      if (end === 'power-off') return 0;
      failed = end === 'failed' ? failed + 1 : 0;
      if (failed >= (options.maxFailedBoots ?? 5)) {
        options.log(`halted: ${failed} boots in a row reached no agent`);
        return 1;
      }
      if (stopping) return 0;
    }
  }

  const done = loop();
  return {
    done,
    powerCut() {
      cut = true;
      killGroups('SIGKILL');
    },
    async stop() {
      stopping = true;
      current?.kill('SIGTERM');
      const timer = setTimeout(() => {
        killGroups('SIGKILL');
      }, 5000);
      const code = await done;
      clearTimeout(timer);
      return code;
    },
  };
}

/**
 * Services the agent started detached (etcd) record their PID in `run/*.pid`; a reboot or power
 * cut ends them as it ends everything else on the machine.
 */
async function killPidFiles(root: string): Promise<void> {
  const run = join(root, 'run');
  const names = await readdir(run).catch(() => []);
  for (const name of names.filter((n) => n.endsWith('.pid'))) {
    const pid = Number((await readFile(join(run, name), 'utf8').catch(() => '')).trim());
    if (!Number.isInteger(pid) || pid <= 1) continue;
    // Only a process started for this machine (an argument inside the machine root): a stale PID
    // file must never kill a process that reused the number, nor one of a machine at `<root>2`.
    const args = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
    if (
      !args.some((arg) => arg === root || arg.startsWith(`${root}/`) || arg.includes(`=${root}/`))
    )
      continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** Whether any process is left in the process group `pgid`. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Why booting the slot's kernel would panic, or undefined when it boots. */
async function slotPanics(root: string, slot: 'A' | 'B'): Promise<string | undefined> {
  let manifest: { status?: string; lab?: { boot?: string } };
  try {
    manifest = JSON.parse(
      await readFile(join(root, 'slots', slot.toLowerCase(), 'slot.json'), 'utf8'),
    ) as typeof manifest;
  } catch {
    return 'no slot manifest (the slot was never written)';
  }
  if (manifest.status !== 'ready') return `slot manifest says ${String(manifest.status)}`;
  if (manifest.lab?.boot === 'fail')
    return 'the image is built to fail at boot (dev.molt.lab.boot=fail)';
  return undefined;
}
