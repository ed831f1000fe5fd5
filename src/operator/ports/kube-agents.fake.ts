// SPDX-License-Identifier: Apache-2.0
/**
 * {@link KubeAgents} in memory: control-plane machines whose components run a spec, an etcd
 * cluster with one leader, a log of every call, and failures on demand — an apply of a version
 * that "cannot start" fails `MOLT_KUBE_COMPONENT_UNHEALTHY` and leaves the previous spec running,
 * as the real agent does; a machine can be made unreachable.
 */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import {
  KubeComponents,
  type ComponentSpec,
  type KubeComponent,
} from '../../core/kubernetes/types.ts';
import type {
  ComponentView,
  ControlPlaneView,
  EtcdMemberView,
  ForfeitAnswer,
  StagedBundle,
} from '../../protocol/agent-kubernetes.ts';
import type { KubeAgents } from './kube-agents.ts';
import type { MachineRecord } from './store.ts';

export class FakeKubeAgents implements KubeAgents {
  /** What each machine's components run. */
  readonly running = new Map<string, Map<KubeComponent, ComponentSpec>>();
  readonly staged = new Map<string, Set<string>>();
  leader: string;
  /** Every call, as `<machine> <what>`. */
  readonly calls: string[] = [];
  /** Applies of these `<machine> <component> <version>` (or `* <component> <version>`) fail. */
  readonly failing = new Set<string>();
  /** Machines whose agent does not answer. */
  readonly unreachable = new Set<string>();
  /** Called inside each apply, before it answers (a test can stop the "operator" there). */
  onApply: ((machine: string, component: KubeComponent) => void | Promise<void>) | undefined;

  constructor(machines: readonly string[], spec: ComponentSpec, leader = machines[0] ?? '') {
    for (const m of machines) this.running.set(m, new Map(KubeComponents.map((c) => [c, spec])));
    this.leader = leader;
  }

  private reach(m: MachineRecord, what: string): Map<KubeComponent, ComponentSpec> {
    this.calls.push(`${m.id} ${what}`);
    if (this.unreachable.has(m.id))
      throw new MoltError(ErrorCode.AgentUnreachable, `the agent of ${m.id} is unreachable`, {
        retryable: true,
      });
    const r = this.running.get(m.id);
    if (r === undefined)
      throw new MoltError(ErrorCode.NotControlPlane, `${m.id} runs no control plane`);
    return r;
  }

  private view(name: KubeComponent, s: ComponentSpec): ComponentView {
    return {
      name,
      version: s.version,
      bundle: s.bundle,
      ...(s.emulatedVersion !== undefined && { emulatedVersion: s.emulatedVersion }),
      hash: JSON.stringify(s),
      running: true,
      healthy: true,
    };
  }

  controlPlane(m: MachineRecord): Promise<ControlPlaneView> {
    const r = this.reach(m, 'status');
    return Promise.resolve({
      components: [...r].map(([name, s]) => this.view(name, s)),
      staged: [...(this.staged.get(m.id) ?? [])].map((bundle) => ({
        bundle,
        version: 'v0.0.0',
        dir: '/x',
      })),
    });
  }

  prepull(m: MachineRecord, bundle: string): Promise<StagedBundle> {
    this.reach(m, 'prepull');
    this.staged.set(m.id, new Set([...(this.staged.get(m.id) ?? []), bundle]));
    return Promise.resolve({ bundle, version: 'v0.0.0', dir: `/state/kubernetes/${bundle}` });
  }

  async apply(
    m: MachineRecord,
    component: KubeComponent,
    spec: ComponentSpec,
  ): Promise<ComponentView> {
    const r = this.reach(
      m,
      `apply ${component} ${spec.version}${spec.emulatedVersion === undefined ? '' : `~${spec.emulatedVersion}`}`,
    );
    await this.onApply?.(m.id, component);
    if (
      this.failing.has(`${m.id} ${component} ${spec.version}`) ||
      this.failing.has(`* ${component} ${spec.version}`)
    )
      throw new MoltError(
        ErrorCode.KubeComponentUnhealthy,
        `${component} did not become healthy on ${spec.version}: unknown flag`,
      );
    r.set(component, spec);
    return this.view(component, spec);
  }

  etcdMembers(m: MachineRecord): Promise<EtcdMemberView[]> {
    this.reach(m, 'members');
    return Promise.resolve(
      [...this.running.keys()].map((id) => ({
        id: `${id}-hex`,
        name: id,
        peerUrls: [],
        clientUrls: [],
        isLeader: id === this.leader,
        isLearner: false,
      })),
    );
  }

  forfeitLeadership(m: MachineRecord): Promise<ForfeitAnswer> {
    this.reach(m, 'forfeit');
    if (this.leader !== m.id)
      return Promise.resolve({ leader: `${this.leader}-hex`, moved: false });
    this.leader = [...this.running.keys()].find((id) => id !== m.id) ?? m.id;
    return Promise.resolve({ leader: `${this.leader}-hex`, moved: true });
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
