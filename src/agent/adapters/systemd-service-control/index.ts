// SPDX-License-Identifier: Apache-2.0
/**
 * {@link ServiceControl} on a real machine: each service is a systemd unit (`etcd.service`,
 * `molt-<component>.service`, the role's others), started and stopped through the
 * {@link Services} the agent composes for it (etcd's writes its environment first), seen through
 * `systemctl show`, its output read from the journal (`journalctl -u`).
 */
import {
  serviceNotFound,
  type ServiceControl,
  type ServiceView,
} from '../../ports/service-control.ts';
import type { Services } from '../../ports/services.ts';
import type { Systemctl } from '../systemd-units/systemctl.ts';
import type { JournalReader } from './journal.ts';

export { createJournalReader, type JournalReader } from './journal.ts';

/** One unit under the name molt shows for it. */
export interface NamedUnit {
  readonly name: string;
  readonly unit: string;
  /** Starts and stops it; `units()` empty: the machine does not have the unit (left out). */
  readonly service: Services & { units?(): Promise<readonly string[]> };
}

/** `etcd.service` → `etcd`, `molt-kube-apiserver.service` → `kube-apiserver`. */
export function serviceNameOf(unit: string): string {
  return unit.replace(/\.service$/, '').replace(/^molt-/, '');
}

const stopped = new Set(['inactive', 'failed']);

/** `Key=Value` blocks of `systemctl show` for several units, one block per unit, in order. */
export function parseShow(stdout: string): Record<string, string>[] {
  return stdout
    .split(/\n\s*\n/)
    .filter((block) => block.trim() !== '')
    .map((block) =>
      Object.fromEntries(
        block
          .split('\n')
          .filter((l) => l.includes('='))
          .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1).trim()]),
      ),
    );
}

/** `@1700000000` (`--timestamp=unix`) or systemd's default text; undefined for never/empty. */
function isoTime(value: string | undefined): string | undefined {
  if (value === undefined || value === '' || value === 'n/a') return undefined;
  const unix = /^@(\d+)$/.exec(value);
  const ms = unix?.[1] !== undefined ? Number(unix[1]) * 1000 : Date.parse(value);
  return Number.isFinite(ms) && ms > 0 ? new Date(ms).toISOString() : undefined;
}

function viewOf(name: string, props: Record<string, string> | undefined): ServiceView {
  const state = props?.['ActiveState'] ?? 'unknown';
  // "activating" in sub-state `auto-restart`: the process exited and `Restart=` has not yet
  // started it again — nothing runs.
  const restarting = props?.['SubState'] === 'auto-restart';
  const running = !stopped.has(state) && state !== 'unknown' && !restarting;
  if (!running) return { name, running };
  const pid = Number(props?.['MainPID']);
  const since = isoTime(props?.['ActiveEnterTimestamp']);
  return {
    name,
    running,
    ...(Number.isSafeInteger(pid) && pid > 0 && { pid }),
    ...(since !== undefined && { since }),
  };
}

export function createSystemdServiceControl(o: {
  readonly units: readonly NamedUnit[];
  readonly systemctl: Systemctl;
  readonly journal: JournalReader;
}): ServiceControl {
  const present = async (): Promise<NamedUnit[]> => {
    const has = await Promise.all(
      o.units.map(
        async (u) => u.service.units === undefined || (await u.service.units()).length > 0,
      ),
    );
    return o.units.filter((_, i) => has[i]);
  };
  const find = async (name: string): Promise<NamedUnit> => {
    const units = await present();
    const u = units.find((x) => x.name === name);
    if (u === undefined)
      throw serviceNotFound(
        name,
        units.map((x) => x.name),
      );
    return u;
  };
  const views = async (units: readonly NamedUnit[]): Promise<ServiceView[]> => {
    if (units.length === 0) return [];
    const props = ['Id', 'ActiveState', 'SubState', 'MainPID', 'ActiveEnterTimestamp'].flatMap(
      (p) => ['-p', p],
    );
    const r = await o.systemctl.run([
      'show',
      '--timestamp=unix',
      ...props,
      ...units.map((u) => u.unit),
    ]);
    const blocks = parseShow(r.stdout);
    return units.map((u) =>
      viewOf(
        u.name,
        blocks.find((b) => b['Id'] === u.unit),
      ),
    );
  };
  const one = async (u: NamedUnit): Promise<ServiceView> => {
    const [v] = await views([u]);
    return v ?? { name: u.name, running: false };
  };
  return {
    list: async () => views(await present()),
    async start(name) {
      const u = await find(name);
      await u.service.startAll();
      return one(u);
    },
    async stop(name) {
      const u = await find(name);
      await u.service.stopAll();
      return one(u);
    },
    async restart(name) {
      const u = await find(name);
      await u.service.stopAll();
      await u.service.startAll();
      return one(u);
    },
    async logs(name, options) {
      const u = await find(name);
      const args = ['-u', u.unit, '-n', String(options.tail), '-o', 'cat', '--no-pager'];
      return Promise.resolve(o.journal(options.follow ? [...args, '-f'] : args, options.signal));
    },
  };
}
