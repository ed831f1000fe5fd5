// SPDX-License-Identifier: Apache-2.0
/**
 * The ports only a real machine has (a config with `disk:`, docs/real-machines.md §4), for
 * compose.ts: the role's systemd units as its services, EPHEMERAL as a mounted partition, health
 * from systemd; on control planes the etcd member and cluster lease as in the lab, with the etcd
 * service being the `etcd.service` unit (docs/adr/0008 §8).
 */
import { join } from 'node:path';
import { etcdMemberHealthy } from './adapters/health/checks.ts';
import { createPartitionMounts } from './adapters/partition-mounts/index.ts';
import { createSystemdEtcdService, etcdUnit } from './adapters/systemd-units/etcd-unit.ts';
import {
  createSystemctl,
  createSystemdUnits,
  defaultUnits,
  type Systemctl,
  type SystemdUnits,
} from './adapters/systemd-units/index.ts';
import { systemdSystemHealth, systemdUnitsHealth } from './adapters/systemd-health/index.ts';
import {
  createJournalReader,
  createSystemdServiceControl,
  serviceNameOf,
} from './adapters/systemd-service-control/index.ts';
import type { DiskConfig, MachineConfig } from '../protocol/machine-config.ts';
import type { MachinePorts } from './machine/ports.ts';
import type { HealthCheck } from './ports/health-check.ts';
import type { Mounts } from './ports/mounts.ts';
import type { ServiceControl } from './ports/service-control.ts';
import type { Services } from './ports/services.ts';

type RealPorts = Pick<
  MachinePorts,
  'services' | 'mounts' | 'etcd' | 'lease' | 'controlPlane' | 'serviceControl' | 'etcdRecovery'
>;

/**
 * On a real machine the units are enabled and started by the boot, so after a reboot they hold
 * EPHEMERAL before the agent runs; a wipe (`preserve: false`) stops them first. The Rejoining
 * phase starts them again right after (MountEphemeral, StartServices).
 */
export function stopServicesBeforeWipe(mounts: Mounts, services: Services): Mounts {
  return {
    release: () => mounts.release(),
    mount: () => mounts.mount(),
    async wipe(operationId) {
      await services.stopAll();
      await mounts.wipe(operationId);
    },
  };
}

/**
 * Services in order: etcd (when it is this machine's member) first, then the control-plane
 * components it renders (docs/adr/0012 §3), then the other units; stopped in reverse.
 */
function servicesOf(
  all: SystemdUnits,
  etcd: SystemdUnits | undefined,
  components: Services | undefined,
): SystemdUnits {
  if (etcd === undefined) return all;
  return {
    units: async () => [...(await etcd.units()), ...(await all.units())],
    running: async () => [
      ...(await etcd.running()),
      ...((await components?.running()) ?? []),
      ...(await all.running()),
    ],
    async startAll() {
      await etcd.startAll();
      await components?.startAll();
      await all.startAll();
    },
    async stopAll() {
      await all.stopAll();
      await components?.stopAll();
      await etcd.stopAll();
    },
  };
}

/** What a real machine's ports are built from. */
interface RealMachine {
  readonly root: string;
  readonly config: MachineConfig;
  readonly disk: DiskConfig;
  readonly systemctl: Systemctl;
}

async function etcdPorts(m: RealMachine, health: HealthCheck[]) {
  const { root, config, disk, systemctl } = m;
  const etcd = config.etcd;
  if (etcd === undefined) return undefined;
  // The etcd client library is loaded only on control planes, as in compose.ts.
  const [{ createEtcdMember }, { clusterLeaseOf }, { createEtcdRecovery }] = await Promise.all([
    import('./adapters/etcd/etcd-member.ts'),
    import('./adapters/etcd/cluster-lease.ts'),
    import('./adapters/etcd/recovery.ts'),
  ]);
  const dataDir = join(disk.ephemeral, 'etcd');
  const service = createSystemdEtcdService({ root, dataDir, ...etcd, systemctl });
  const member = createEtcdMember({ ...etcd, service, dataDir });
  const lease = clusterLeaseOf({ ...config, etcd });
  health.push(etcdMemberHealthy(member));
  // Restore and rejoin stop and start every service of the machine (set once they are composed).
  const recovery = (services: Services) =>
    createEtcdRecovery({ ...etcd, service, dataDir, services, member });
  return { service, member, lease, recovery };
}

/**
 * The machine's units by name for `molt node service …` (docs/adr/0012 §6): etcd through its own
 * adapter (it writes etcd's environment first), every other unit on its own.
 */
function unitsByName(
  units: readonly string[],
  etcd: SystemdUnits | undefined,
  systemctl: Systemctl,
): ServiceControl {
  const one = (unit: string): SystemdUnits => createSystemdUnits({ units: [unit], systemctl });
  const all = [...(etcd === undefined ? [] : [etcdUnit]), ...units];
  return createSystemdServiceControl({
    units: all.map((unit) => ({
      name: serviceNameOf(unit),
      unit,
      service: unit === etcdUnit && etcd !== undefined ? etcd : one(unit),
    })),
    systemctl,
    journal: createJournalReader(),
  });
}

export async function realMachinePorts(
  facts: { readonly root: string; readonly config: MachineConfig; readonly systemctl?: string },
  disk: DiskConfig,
  health: HealthCheck[],
): Promise<RealPorts> {
  const { config } = facts;
  const systemctl = createSystemctl(facts.systemctl);
  const cp = await etcdPorts({ root: facts.root, config, disk, systemctl }, health);
  const units = (disk.units ?? defaultUnits(config.role)).filter(
    // The member's etcd.service is its own adapter (it writes etcd's environment first).
    (u) => cp === undefined || u !== etcdUnit,
  );
  const controlPlane =
    cp === undefined
      ? undefined
      : await (
          await import('./compose-control-plane.ts')
        ).controlPlaneOf(facts.root, config, { kind: 'systemd', systemctl }, health);
  const services = servicesOf(
    createSystemdUnits({ units, systemctl }),
    cp?.service,
    controlPlane?.services,
  );
  health.push(
    systemdSystemHealth(systemctl),
    systemdUnitsHealth(systemctl, () => services.units()),
  );
  const mounts = createPartitionMounts({ mountPoint: disk.ephemeral });
  return {
    services,
    mounts: stopServicesBeforeWipe(mounts, services),
    serviceControl: unitsByName(units, cp?.service, systemctl),
    ...(cp === undefined
      ? {}
      : { etcd: cp.member, lease: cp.lease, etcdRecovery: cp.recovery(services) }),
    ...(controlPlane !== undefined && { controlPlane }),
  };
}
