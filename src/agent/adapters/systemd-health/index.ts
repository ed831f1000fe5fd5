// SPDX-License-Identifier: Apache-2.0
/**
 * Health from systemd on a real machine (docs/real-machines.md §4), run beside the agent's own
 * checks until the trial slot is committed:
 * - `systemd`: `systemctl is-system-running` is `running`. `starting`/`initializing` fail as
 *   "still starting" (the deadline decides); `degraded` fails naming the failed units, since a
 *   release that breaks any unit of the image must not be committed.
 * - `systemd-units`: every unit of the role (the Services adapter's list) is active, or was
 *   started and skipped by its own condition: the node runtime's units carry
 *   `ConditionPathExists=` on their configuration on STATE, so a machine without a node
 *   configuration boots a release with a kubelet and runs none — which must not fail the release.
 */
import type { HealthCheck, HealthResult } from '../../ports/health-check.ts';
import { activeStates, type Systemctl } from '../systemd-units/index.ts';
import { firstLine } from '../systemd-units/systemctl.ts';

const result = (name: string, ok: boolean, message: string): HealthResult => ({
  name,
  status: ok ? 'ok' : 'failing',
  message,
});

async function failedUnits(systemctl: Systemctl, signal: AbortSignal): Promise<string[]> {
  const r = await systemctl.run(['list-units', '--failed', '--plain', '--no-legend'], { signal });
  return r.stdout
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[0] ?? '')
    .filter((u) => u !== '');
}

export function systemdSystemHealth(systemctl: Systemctl): HealthCheck {
  const name = 'systemd';
  return {
    name,
    async run(signal) {
      const r = await systemctl.run(['is-system-running'], { signal });
      const state = r.stdout.trim() || firstLine(r);
      switch (state) {
        case 'running':
          return result(name, true, 'running');
        case 'starting':
        case 'initializing':
          return result(name, false, `still starting (${state})`);
        case 'degraded': {
          const failed = await failedUnits(systemctl, signal);
          return result(
            name,
            false,
            `degraded: failed ${failed.length === 0 ? 'units unknown' : failed.join(', ')}`,
          );
        }
        default:
          return result(name, false, `system state ${state}`);
      }
    },
  };
}

/**
 * Whether the last start of `unit` found one of its conditions false (systemd then leaves it
 * inactive without a failure). `ConditionTimestamp` is empty until a start checked them.
 */
async function skippedByCondition(
  systemctl: Systemctl,
  unit: string,
  signal: AbortSignal,
): Promise<boolean> {
  const r = await systemctl.run(['show', '-p', 'ConditionResult,ConditionTimestamp', unit], {
    signal,
  });
  const props = new Map(
    r.stdout.split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  return props.get('ConditionResult') === 'no' && (props.get('ConditionTimestamp') ?? '') !== '';
}

/** @param units the role's units (systemd-units' `units()`), asked at every run. */
export function systemdUnitsHealth(
  systemctl: Systemctl,
  units: () => Promise<readonly string[]>,
): HealthCheck {
  const name = 'systemd-units';
  return {
    name,
    async run(signal) {
      const list = await units();
      if (list.length === 0) return { name, status: 'skipped', message: 'no units for this role' };
      const states = await activeStates(systemctl, list, signal);
      const down: string[] = [];
      const skipped: string[] = [];
      for (const [i, unit] of list.entries()) {
        const state = states[i] ?? 'unknown';
        if (state === 'active') continue;
        if (state === 'inactive' && (await skippedByCondition(systemctl, unit, signal)))
          skipped.push(unit);
        else down.push(`${unit} ${state}`);
      }
      if (down.length > 0) return result(name, false, down.join(', '));
      const active = list.filter((u) => !skipped.includes(u));
      const parts = [
        ...(active.length > 0 ? [`${active.join(', ')} active`] : []),
        ...(skipped.length > 0 ? [`${skipped.join(', ')} not started (a condition is false)`] : []),
      ];
      return result(name, true, parts.join('; '));
    },
  };
}
