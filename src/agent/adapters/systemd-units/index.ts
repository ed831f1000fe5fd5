// SPDX-License-Identifier: Apache-2.0
/**
 * {@link Services} on a real machine: the role's systemd units (docs/real-machines.md §4), stopped
 * newest-first and started in order by `systemctl`. Units the machine does not have
 * (`LoadState=not-found`: an image without containerd) are left out, looked up once at first use,
 * so the list is what the booted image carries. Both calls are level-triggered, as systemctl is.
 */
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import type { Services } from '../../ports/services.ts';
import { firstLine, type Systemctl } from './systemctl.ts';

export { createSystemctl, type Systemctl } from './systemctl.ts';

/**
 * The node runtime's units (docs/adr/0015 §4), in start order; stopped in reverse before a reboot.
 * The kubelet stops first, so nothing starts pods again; then `molt-kube-pods.service`, whose
 * stop removes every pod sandbox through the CRI while containerd still runs; containerd last.
 * Without that middle step containerd's shims and the pods' mounts would keep EPHEMERAL (where
 * containerd's and the kubelet's roots live) busy, and the upgrade would fail on MOLT_MOUNT_BUSY.
 */
export const NodeRuntimeUnits: readonly string[] = [
  'containerd.service',
  'molt-kube-pods.service',
  'kubelet.service',
];

/** The units a role runs when the machine config names none, in start order. */
export function defaultUnits(role: 'control-plane' | 'worker'): readonly string[] {
  return role === 'control-plane' ? ['etcd.service', ...NodeRuntimeUnits] : NodeRuntimeUnits;
}

export interface SystemdUnitsOptions {
  /** Candidate units in start order; those not installed are skipped. */
  readonly units: readonly string[];
  readonly systemctl: Systemctl;
  /**
   * How long one unit may take to stop. systemd's own `TimeoutStopSec` (90 s by default) ends in
   * SIGKILL; this bounds the wait on top of it. @default 120000
   */
  readonly stopTimeoutMs?: number;
  /** @default 120000 */
  readonly startTimeoutMs?: number;
}

/** {@link Services} plus the units it manages (for the health check). */
export interface SystemdUnits extends Services {
  units(): Promise<readonly string[]>;
}

const stoppedStates = new Set(['inactive', 'failed']);

/** The `is-active` answer of each unit, in order (systemctl prints one line per unit). */
export async function activeStates(
  systemctl: Systemctl,
  units: readonly string[],
  signal?: AbortSignal,
): Promise<readonly string[]> {
  if (units.length === 0) return [];
  const r = await systemctl.run(['is-active', ...units], signal === undefined ? {} : { signal });
  const lines = r.stdout.split('\n').map((l) => l.trim());
  return units.map((_, i) => lines[i] || 'unknown');
}

export function createSystemdUnits(o: SystemdUnitsOptions): SystemdUnits {
  let present: Promise<readonly string[]> | undefined;
  const units = (): Promise<readonly string[]> => {
    present ??= lookUp(o).catch((e: unknown) => {
      present = undefined; // systemd busy at start: ask again next time
      throw e;
    });
    return present;
  };
  return {
    units,
    async running() {
      const list = await units();
      const states = await activeStates(o.systemctl, list);
      // A unit still stopping (`deactivating`) or starting still has its processes.
      return list.filter((_, i) => !stoppedStates.has(states[i] ?? 'inactive'));
    },
    async startAll() {
      for (const unit of await units()) {
        const r = await o.systemctl.run(['start', unit], {
          timeoutMs: o.startTimeoutMs ?? 120_000,
        });
        if (r.code !== 0)
          throw new MoltError(
            ErrorCode.ServiceStartFailed,
            `${unit} did not start: ${r.timedOut ? 'timed out' : firstLine(r)}`,
            { hint: `see journalctl -u ${unit}`, retryable: true },
          );
      }
    },
    async stopAll() {
      for (const unit of [...(await units())].reverse()) await stopUnit(o, unit);
    },
  };
}

/** Stop one unit; what counts is the state it ends in, not systemctl's exit status. */
async function stopUnit(o: SystemdUnitsOptions, unit: string): Promise<void> {
  const r = await o.systemctl.run(['stop', unit], { timeoutMs: o.stopTimeoutMs ?? 120_000 });
  const [state] = await activeStates(o.systemctl, [unit]);
  if (state !== undefined && stoppedStates.has(state)) return;
  const why = r.timedOut
    ? `still ${state ?? 'unknown'} after ${String((o.stopTimeoutMs ?? 120_000) / 1000)} s`
    : `${state ?? 'unknown'} (${firstLine(r)})`;
  throw new MoltError(ErrorCode.ServiceStopFailed, `${unit} did not stop: ${why}`, {
    hint: `see systemctl status ${unit}; the upgrade was aborted and the stopped units started again`,
  });
}

async function lookUp(o: SystemdUnitsOptions): Promise<readonly string[]> {
  const found: string[] = [];
  for (const unit of o.units) {
    const r = await o.systemctl.run(['show', '-p', 'LoadState', '--value', unit]);
    if (r.code !== 0)
      throw new MoltError(
        ErrorCode.MachineInvalid,
        `cannot ask systemd about ${unit}: ${firstLine(r)}`,
        { hint: 'is systemd running as PID 1 on this machine?', retryable: true },
      );
    if (r.stdout.trim() !== 'not-found') found.push(unit);
  }
  return found;
}
