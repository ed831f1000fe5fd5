// SPDX-License-Identifier: Apache-2.0
/**
 * The steps of a Kubernetes plan (docs/adr/0012 §4), from what every control-plane machine runs to
 * the target:
 *
 * 1. `prepull` the target's bundle on every machine that will apply it, before anything restarts;
 * 2. then one machine at a time — the etcd leader last, with a `forfeit-leadership` step first
 *    when another control plane can take the lead, so the leader is restarted once and the
 *    cluster elects another only once — apply kube-apiserver, then kube-controller-manager, then
 *    kube-scheduler.
 *
 * A component whose spec would not change gets no step (an interrupted plan made again skips what
 * it finished). Every `apply` records the spec it replaces (`previous`), which is what the rollback
 * applies again (`rollback.ts`); a component whose previous bundle nobody knows makes the plan
 * impossible to undo, and is refused here rather than discovered during a rollback.
 */
import { ErrorCode } from '../errors.ts';
import {
  KubeComponents,
  type ComponentSpec,
  type ControlPlaneMachine,
  type ExtraArgs,
  type KubeComponent,
  type KubeStep,
  type KubeTarget,
  type RunningComponent,
} from './types.ts';

export interface PlanInput {
  readonly machines: readonly ControlPlaneMachine[];
  /** The machine whose etcd member leads (undefined: unknown, no forfeit step). */
  readonly etcdLeader?: string;
  readonly target: KubeTarget;
  /** The extra arguments each component runs with now (the last plan's target). */
  readonly currentArgs: Readonly<Partial<Record<KubeComponent, ExtraArgs>>>;
  /** The bundle (by digest) of a version, for components that do not report theirs. */
  readonly bundleOf: (version: string) => string | undefined;
}

export type PlanResult =
  | { readonly ok: true; readonly steps: readonly KubeStep[] }
  | {
      readonly ok: false;
      readonly code: typeof ErrorCode.KubeBundleNotFound;
      readonly reason: string;
    };

/** The spec a component of the target runs. */
export function targetSpec(target: KubeTarget, component: KubeComponent): ComponentSpec {
  return {
    version: target.version,
    bundle: target.bundle,
    ...(target.emulatedVersion !== undefined && { emulatedVersion: target.emulatedVersion }),
    extraArgs: target.extraArgs[component] ?? {},
  };
}

const sameArgs = (a: ExtraArgs, b: ExtraArgs): boolean => {
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && a[k] === b[k]);
};

/** Whether applying `b` over `a` changes nothing the agent renders. */
export const sameSpec = (a: ComponentSpec, b: ComponentSpec): boolean =>
  a.version === b.version &&
  a.bundle === b.bundle &&
  a.emulatedVersion === b.emulatedVersion &&
  sameArgs(a.extraArgs, b.extraArgs);

function previousSpec(c: RunningComponent, input: PlanInput): ComponentSpec | { missing: string } {
  if (c.version === undefined) return { missing: `${c.name} reports no version` };
  const bundle = c.bundle ?? input.bundleOf(c.version);
  if (bundle === undefined)
    return {
      missing: `no bundle of ${c.version}, which ${c.name} runs (publish it to the bundle repository: \`molt dev publish-kubernetes --version ${c.version}\`)`,
    };
  return {
    version: c.version,
    bundle,
    ...(c.emulatedVersion !== undefined && { emulatedVersion: c.emulatedVersion }),
    extraArgs: input.currentArgs[c.name] ?? {},
  };
}

/** The machines in the order they are upgraded: by id, the etcd leader last. */
export function machineOrder(
  machines: readonly ControlPlaneMachine[],
  leader: string | undefined,
): ControlPlaneMachine[] {
  const rank = (m: ControlPlaneMachine): number => (m.id === leader ? 1 : 0);
  return [...machines].sort(
    (a, b) => rank(a) - rank(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
}

type Draft = Omit<KubeStep, 'id' | 'state'>;

function machineSteps(m: ControlPlaneMachine, input: PlanInput): Draft[] | { missing: string } {
  const applies: Draft[] = [];
  for (const name of KubeComponents) {
    const running = m.components.find((c) => c.name === name);
    const spec = targetSpec(input.target, name);
    const previous = running === undefined ? undefined : previousSpec(running, input);
    if (previous !== undefined && 'missing' in previous)
      return { missing: `${m.id}: ${previous.missing}` };
    if (previous !== undefined && sameSpec(previous, spec)) continue;
    applies.push({
      machine: m.id,
      action: 'apply',
      component: name,
      spec,
      ...(previous !== undefined && { previous }),
    });
  }
  // A lone control plane has nobody to hand its etcd leadership to: it keeps leading.
  if (applies.length === 0 || m.id !== input.etcdLeader || input.machines.length < 2)
    return applies;
  return [{ machine: m.id, action: 'forfeit-leadership' }, ...applies];
}

/** Number the drafts into steps: `03-cp-2-apply-kube-scheduler`. */
export function numbered(drafts: readonly Draft[], prefix = ''): KubeStep[] {
  return drafts.map((d, i) => ({
    ...d,
    id: `${prefix}${String(i + 1).padStart(2, '0')}-${d.machine}-${d.action}${d.component === undefined ? '' : `-${d.component}`}`,
    state: 'pending',
  }));
}

/** The steps from what `input.machines` run to `input.target`. */
export function planSteps(input: PlanInput): PlanResult {
  const perMachine: Draft[][] = [];
  for (const m of machineOrder(input.machines, input.etcdLeader)) {
    const steps = machineSteps(m, input);
    if ('missing' in steps)
      return {
        ok: false,
        code: ErrorCode.KubeBundleNotFound,
        reason: `the plan could not be rolled back: ${steps.missing}`,
      };
    perMachine.push(steps);
  }
  const prepulls: Draft[] = perMachine
    .filter((s) => s.some((d) => d.spec !== undefined && d.spec.bundle !== d.previous?.bundle))
    .map((s) => ({ machine: s[0]?.machine ?? '', action: 'prepull', bundle: input.target.bundle }));
  return { ok: true, steps: numbered([...prepulls, ...perMachine.flat()]) };
}
