// SPDX-License-Identifier: Apache-2.0
/**
 * Builds the machine's ports from its config: the only place in the agent that chooses adapters
 * (STYLE §2). A config with `disk:` is a real machine (docs/real-machines.md §4): systemd units,
 * a mounted EPHEMERAL partition and systemd health, built by compose-real.ts. Without it, a lab
 * machine: control planes get the etcd member, its service and the cluster lease; workers get no
 * services and no lease. The etcd client library is imported only for control planes.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createGrubBootloader } from './adapters/grub/index.ts';
import { etcdMemberHealthy, kubeNodeReady } from './adapters/health/checks.ts';
import { createDirMounts } from './adapters/dir-mounts/index.ts';
import {
  createLabServiceControl,
  type NamedService,
} from './adapters/lab-service-control/index.ts';
import { labSlotHealth } from './adapters/lab/slot-health.ts';
import { createNoClusterKubeNode } from './adapters/no-cluster/index.ts';
import { createOciImageSource } from './adapters/oci-image-source/index.ts';
import { createBlockSlotStore } from './adapters/block-slot-store/index.ts';
import { createFsSlotStore } from './adapters/fs-slot-store/index.ts';
import { createSdBootBootloader } from './adapters/sdboot/index.ts';
import { realMachinePorts } from './compose-real.ts';
import { referencedRegistryOptions } from './adapters/oci-image-source/config-options.ts';
import type { MachineConfig } from '../protocol/machine-config.ts';
import type { MachinePorts } from './machine/ports.ts';
import type { BootInfo } from './ports/boot-info.ts';
import type { Bootloader } from './ports/bootloader.ts';
import { systemClock } from './ports/clock.system.ts';
import type { HealthCheck } from './ports/health-check.ts';
import type { ImageSource } from './ports/image-source.ts';
import type { Power } from './ports/power.ts';
import type { ServiceControl } from './ports/service-control.ts';
import type { Services } from './ports/services.ts';

export function bootloaderFor(root: string, config: MachineConfig): Bootloader {
  return config.bootloader === 'grub' ? createGrubBootloader(root) : createSdBootBootloader(root);
}

export async function imageSourceFor(root: string, config: MachineConfig): Promise<ImageSource> {
  const publicKeyPem =
    config.publicKeyFile === undefined ? undefined : await readFile(config.publicKeyFile, 'utf8');
  return createOciImageSource({
    root,
    registry: referencedRegistryOptions(config.registry),
    mirrors: config.registry.mirrors,
    ...(publicKeyPem === undefined ? {} : { publicKeyPem }),
    maxBytes: config.maxImageBytes,
  });
}

const noServices: Services = {
  stopAll: () => Promise.resolve(),
  startAll: () => Promise.resolve(),
  running: () => Promise.resolve([]),
};

async function controlPlanePorts(root: string, config: MachineConfig, health: HealthCheck[]) {
  const etcd = config.etcd;
  if (etcd === undefined)
    return { services: noServices, serviceControl: labServiceControl(root, []) };
  const [{ createEtcdService }, { createEtcdMember }, { clusterLeaseOf }, { createEtcdRecovery }] =
    await Promise.all([
      import('./adapters/etcd-service/index.ts'),
      import('./adapters/etcd/etcd-member.ts'),
      import('./adapters/etcd/cluster-lease.ts'),
      import('./adapters/etcd/recovery.ts'),
    ]);
  const dataDir = join(root, 'ephemeral', 'etcd');
  const etcdService = createEtcdService({ root, dataDir, ...etcd });
  const member = createEtcdMember({ ...etcd, service: etcdService, dataDir });
  const controlPlane = await hostedComponents(root, config, health);
  const services =
    controlPlane === undefined ? etcdService : await afterEtcd(etcdService, controlPlane.services);
  const lease = clusterLeaseOf({ ...config, etcd });
  health.push(etcdMemberHealthy(member));
  // Each service by name, for `molt node service …` (docs/adr/0012 §6).
  const named: NamedService[] = [
    { name: 'etcd', service: etcdService },
    ...(controlPlane === undefined
      ? []
      : controlPlane.names.map((name) => ({ name, service: controlPlane.component(name) }))),
  ];
  const etcdRecovery = createEtcdRecovery({
    ...etcd,
    service: etcdService,
    dataDir,
    services,
    member,
  });
  const serviceControl = labServiceControl(root, named);
  return {
    ...{ services, etcd: member, lease, etcdRecovery, serviceControl },
    ...(controlPlane !== undefined && { controlPlane }),
  };
}

/** A lab machine's services by name (none on a worker). */
function labServiceControl(root: string, services: readonly NamedService[]): ServiceControl {
  return createLabServiceControl({ root, services });
}

/** A lab control-plane machine's Kubernetes components (its config's `controlPlane`), as processes. */
async function hostedComponents(root: string, config: MachineConfig, health: HealthCheck[]) {
  if (config.controlPlane === undefined) return undefined;
  const { controlPlaneOf } = await import('./compose-control-plane.ts');
  return controlPlaneOf(root, config, { kind: 'lab' }, health);
}

/** etcd first, then the components: they start after it and stop before it. */
async function afterEtcd(etcd: Services, components: Services): Promise<Services> {
  const { servicesInOrder } = await import('./adapters/process-service/index.ts');
  return servicesInOrder([etcd, components]);
}

/** What the machine's ports are built from. */
export interface MachineFacts {
  readonly root: string;
  readonly config: MachineConfig;
  readonly boot: BootInfo;
  readonly power: Power;
  /** Under the lab firmware: lab images may be built never to become healthy. */
  readonly lab: boolean;
  /** The systemctl a real machine's adapters run. @default 'systemctl' (tests pass a stand-in) */
  readonly systemctl?: string;
}

/** Services, mounts, and on control planes the etcd member and lease: real or lab. */
async function rolePorts(facts: MachineFacts, health: HealthCheck[]) {
  const { root, config } = facts;
  if (config.disk !== undefined) return realMachinePorts(facts, config.disk, health);
  const cp =
    config.role === 'control-plane'
      ? await controlPlanePorts(root, config, health)
      : { services: noServices, serviceControl: labServiceControl(root, []) };
  return { mounts: createDirMounts(root), ...cp };
}

export async function machinePorts(facts: MachineFacts): Promise<MachinePorts> {
  const { root, config, boot, power } = facts;
  const slots =
    config.disk === undefined
      ? createFsSlotStore(root, { maxImageBytes: config.maxImageBytes })
      : createBlockSlotStore(root, {
          partitions: config.disk.slots,
          maxImageBytes: config.maxImageBytes,
        });
  const booted = await slots.manifest(boot.slot);
  const kube =
    config.kubernetes === undefined
      ? createNoClusterKubeNode()
      : await (
          await import('./adapters/kube-node/index.ts')
        ).createApiKubeNode(config.kubernetes, {
          machine: config.node,
          booted: booted?.version,
          bootId: boot.bootId,
          kubelet: booted?.kubeletVersion,
        });
  const health: HealthCheck[] = [
    ...(facts.lab ? [labSlotHealth(slots, boot.slot)] : []),
    kubeNodeReady(kube),
  ];
  const role = await rolePorts(facts, health);
  return {
    bootloader: bootloaderFor(root, config),
    slots,
    images: await imageSourceFor(root, config),
    kube,
    clock: systemClock,
    power,
    health,
    ...role,
  };
}
