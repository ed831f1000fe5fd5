// SPDX-License-Identifier: Apache-2.0
/**
 * The control-plane routes of the agents, as the Kubernetes plan uses them (docs/adr/0012 §3–4):
 * what each control-plane machine runs, pre-pull, apply one component (answers once it is healthy,
 * or fails `MOLT_KUBE_COMPONENT_UNHEALTHY` having put the previous spec back), and etcd's members
 * and leadership. The adapter (`adapters/kube-agents`) wraps protocol's typed client over the
 * operator's mTLS connections; `kube-agents.fake.ts` is the fake beside it.
 */
import type { ComponentSpec, KubeComponent } from '../../core/kubernetes/types.ts';
import type {
  ComponentView,
  ControlPlaneView,
  EtcdMemberView,
  ForfeitAnswer,
  StagedBundle,
} from '../../protocol/agent-kubernetes.ts';
import type { MachineRecord } from './store.ts';

export interface KubeAgents {
  controlPlane(machine: MachineRecord): Promise<ControlPlaneView>;
  prepull(machine: MachineRecord, bundle: string): Promise<StagedBundle>;
  /** Resolves once the component runs healthy on `spec` (it may take minutes). */
  apply(
    machine: MachineRecord,
    component: KubeComponent,
    spec: ComponentSpec,
  ): Promise<ComponentView>;
  etcdMembers(machine: MachineRecord): Promise<EtcdMemberView[]>;
  /** Hand the etcd leadership of this machine's member to another member (no-op when it does not lead). */
  forfeitLeadership(machine: MachineRecord): Promise<ForfeitAnswer>;
  close(): Promise<void>;
}
