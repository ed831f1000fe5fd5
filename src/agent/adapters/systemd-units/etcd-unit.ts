// SPDX-License-Identifier: Apache-2.0
/**
 * The etcd member's service on a real machine (docs/adr/0008 §8): `etcd.service`, a systemd unit
 * of the OS image, with the flags the lab passes on etcd's command line (etcd-service's
 * `etcdArgs`, join spec included) written as `ETCD_*` variables to `<root>/state/etcd.env` before
 * every start. The unit reads that file (see {@link etcdUnitDropIn}), so the member adapter's
 * join-as-learner works unchanged: it writes the join spec, then starts the service.
 *
 * Disabling (a member that left the cluster) is the lab's marker `<root>/state/etcd.disabled`,
 * which the unit's `ConditionPathExists=!` also honours at boot: `systemctl disable` cannot work
 * on a read-only root, and a removed member started by the boot would exit at once anyway.
 */
import { access, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { etcdArgs, type EtcdService, type EtcdServiceOptions } from '../etcd-service/index.ts';
import { createSystemdUnits, type Systemctl, type SystemdUnits } from './index.ts';

export const etcdUnit = 'etcd.service';

export interface SystemdEtcdOptions extends EtcdServiceOptions {
  readonly systemctl: Systemctl;
}

const envFile = (root: string): string => join(root, 'state', 'etcd.env');
const disabledFile = (root: string): string => join(root, 'state', 'etcd.disabled');

/** `--initial-cluster=a=…` → `ETCD_INITIAL_CLUSTER=a=…` (etcd reads every flag from its variable). */
export function etcdEnvironment(args: readonly string[]): string {
  return args
    .map((a) => /^--([a-z0-9-]+)=(.*)$/.exec(a))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => `ETCD_${(m[1] ?? '').toUpperCase().replaceAll('-', '_')}=${m[2] ?? ''}\n`)
    .join('');
}

/**
 * The drop-in an OS image installs as `/etc/systemd/system/etcd.service.d/molt.conf` over
 * Debian's `etcd-server` unit: molt's environment, its data dir, and no start while disabled.
 */
export function etcdUnitDropIn(root: string, dataDir: string, binary = '/usr/bin/etcd'): string {
  return `# molt: etcd runs as the member molt's agent configures (docs/real-machines.md §4)
[Unit]
ConditionPathExists=!${disabledFile(root)}
RequiresMountsFor=${dataDir}

[Service]
EnvironmentFile=${envFile(root)}
ExecStartPre=+/usr/bin/install -d -o etcd -g etcd -m 0700 ${dataDir}
ExecStart=
ExecStart=${binary}
`;
}

export function createSystemdEtcdService(o: SystemdEtcdOptions): EtcdService & SystemdUnits {
  const unit = createSystemdUnits({ units: [etcdUnit], systemctl: o.systemctl });
  const disabled = disabledFile(o.root);
  return {
    ...unit,
    async startAll() {
      if (
        await access(disabled).then(
          () => true,
          () => false,
        )
      )
        return;
      await mkdir(join(o.root, 'state'), { recursive: true });
      await writeFileAtomic(envFile(o.root), etcdEnvironment(await etcdArgs(o)));
      await unit.startAll();
    },
    async disable() {
      await mkdir(join(o.root, 'state'), { recursive: true });
      await writeFile(disabled, '');
    },
    async enable() {
      await rm(disabled, { force: true });
    },
  };
}
