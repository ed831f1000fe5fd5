// SPDX-License-Identifier: Apache-2.0
/** Everything the runner drives, as ports; `agent/main.ts` fills it with adapters. */
import type { Bootloader } from '../ports/bootloader.ts';
import type { ControlPlane } from './control-plane.ts';
import type { Clock } from '../ports/clock.ts';
import type { ClusterLease } from '../ports/cluster-lease.ts';
import type { EtcdMember } from '../ports/etcd-member.ts';
import type { EtcdRecovery } from '../ports/etcd-recovery.ts';
import type { HealthCheck } from '../ports/health-check.ts';
import type { ImageSource } from '../ports/image-source.ts';
import type { KubeNode } from '../ports/kube-node.ts';
import type { Mounts } from '../ports/mounts.ts';
import type { Power } from '../ports/power.ts';
import type { ServiceControl } from '../ports/service-control.ts';
import type { Services } from '../ports/services.ts';
import type { SlotStore } from '../ports/slot-store.ts';

export interface MachinePorts {
  readonly bootloader: Bootloader;
  readonly slots: SlotStore;
  readonly images: ImageSource;
  readonly services: Services;
  readonly mounts: Mounts;
  readonly kube: KubeNode;
  readonly power: Power;
  readonly clock: Clock;
  readonly health: readonly HealthCheck[];
  /** Control-plane machines only. */
  readonly lease?: ClusterLease;
  /** Control-plane machines only. */
  readonly etcd?: EtcdMember;
  /** Control-plane machines that render Kubernetes components (config `controlPlane`) only. */
  readonly controlPlane?: ControlPlane;
  /** The machine's services one by name (the API's; the runner uses `services`). */
  readonly serviceControl?: ServiceControl;
  /** Control-plane machines only: etcd's recovery (the API's; docs/adr/0012 §6). */
  readonly etcdRecovery?: EtcdRecovery;
}

/** Crash injection points (lab only); a no-op everywhere else. */
export interface FaultPoints {
  at(phase: string, when: 'before' | 'after'): Promise<void>;
}
