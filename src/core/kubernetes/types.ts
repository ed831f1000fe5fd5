// SPDX-License-Identifier: Apache-2.0
/**
 * The model of a Kubernetes upgrade plan (docs/adr/0012 §4–5): what a control-plane machine runs,
 * what the cluster should run, and the recorded plan between the two — its steps, each with the
 * spec it applies and the spec it replaces, so the plan can always be undone in reverse. Pure
 * data: the operator stores it (`kube-upgrades/<cluster>/<id>`), the API shows it, core plans it.
 */

/** The control-plane components, in the order one machine is upgraded (rolled back in reverse). */
export const KubeComponents = [
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
] as const;
export type KubeComponent = (typeof KubeComponents)[number];

/** `--flag=value` settings by flag name without dashes. */
export type ExtraArgs = Readonly<Record<string, string>>;

/**
 * A cluster's Kubernetes as configured (the fleet file's `clusters[].kubernetes`, a molt.dev
 * `KubernetesCluster`): protocol's `KubernetesClusterSpec`, which parses it, has this shape.
 */
export interface KubeClusterConfig {
  readonly version: string;
  readonly bundleRepository?: string | undefined;
  readonly apiserver: { readonly extraArgs: ExtraArgs };
  readonly controllerManager: { readonly extraArgs: ExtraArgs };
  readonly scheduler: { readonly extraArgs: ExtraArgs };
  readonly finalize: boolean;
}

/** One component's spec as the agent applies it (`ComponentApplyBody`). */
export interface ComponentSpec {
  /** `v1.36.3`. */
  readonly version: string;
  /** The bundle by digest (`host/repo@sha256:…`). */
  readonly bundle: string;
  /** `1.35`: the minor a newer binary emulates (KEP-4330); absent: its own. */
  readonly emulatedVersion?: string;
  readonly extraArgs: ExtraArgs;
}

/** What the cluster should run: the configuration's spec with its bundle resolved to a digest. */
export interface KubeTarget {
  readonly version: string;
  readonly bundle: string;
  /** Per component (absent: none). */
  readonly extraArgs: Readonly<Partial<Record<KubeComponent, ExtraArgs>>>;
  /** The emulation every component runs with once the plan is done (absent: none). */
  readonly emulatedVersion?: string;
  /** The spec asked for the emulation to be dropped (`finalize: true`). */
  readonly finalize: boolean;
}

/** What one component of one machine runs now, as its agent reports it. */
export interface RunningComponent {
  readonly name: KubeComponent;
  readonly version?: string;
  readonly bundle?: string;
  readonly emulatedVersion?: string;
  readonly healthy: boolean;
}

/** One control-plane machine as the plan sees it. */
export interface ControlPlaneMachine {
  readonly id: string;
  readonly components: readonly RunningComponent[];
}

/** Why a plan exists. */
export const KubePlanKinds = ['upgrade', 'configure', 'finalize', 'rollback'] as const;
export type KubePlanKind = (typeof KubePlanKinds)[number];

/** What a step does: pull a bundle, hand etcd leadership over, or apply one component's spec. */
export const KubeStepActions = ['prepull', 'forfeit-leadership', 'apply'] as const;
export type KubeStepAction = (typeof KubeStepActions)[number];

/** Where a step is: recorded before it starts and after it ends. */
export const KubeStepStates = ['pending', 'started', 'done', 'failed'] as const;
export type KubeStepState = (typeof KubeStepStates)[number];

/** One step of a plan. */
export interface KubeStep {
  /** Unique in the plan: `<n>-<machine>-<action>[-<component>]`. */
  readonly id: string;
  readonly machine: string;
  readonly action: KubeStepAction;
  readonly component?: KubeComponent;
  /** `apply`: the spec applied. */
  readonly spec?: ComponentSpec;
  /** `apply`: the spec it replaces — what the rollback applies again. */
  readonly previous?: ComponentSpec;
  /** `prepull`: the bundle pulled. */
  readonly bundle?: string;
  readonly state: KubeStepState;
  /** Epoch ms. */
  readonly startedAt?: number;
  readonly finishedAt?: number;
  /** Why it failed (`CODE: message`). */
  readonly error?: string;
}

/**
 * The phases of a plan. `Running` moves forward; a failed step makes it `RollingBack` (the done
 * steps undone in reverse); `RolledBack` is the end of that; `Failed` means a rollback step failed
 * too and a person must look (the record says where it stopped). `Succeeded` is the end of a plan
 * that ran every step.
 */
export const KubePlanPhases = [
  'Running',
  'Succeeded',
  'RollingBack',
  'RolledBack',
  'Failed',
] as const;
export type KubePlanPhase = (typeof KubePlanPhases)[number];

/** Whether a plan in `phase` still moves (one such plan per cluster at a time). */
export const isActivePlan = (phase: KubePlanPhase): boolean =>
  phase === 'Running' || phase === 'RollingBack';

/** A check made before anything moved. */
export interface KubeCheck {
  readonly name: string;
  readonly ok: boolean;
  readonly message: string;
}

/** The cluster's Kubernetes before a plan: the lowest version running, and its emulation. */
export interface KubeFrom {
  readonly version: string;
  readonly emulatedVersion?: string;
}

/** A recorded plan: spec, steps with their states, phase. */
export interface KubeUpgrade {
  readonly id: string;
  readonly cluster: string;
  readonly kind: KubePlanKind;
  readonly from: KubeFrom;
  readonly target: KubeTarget;
  readonly phase: KubePlanPhase;
  /** Epoch ms. */
  readonly createdAt: number;
  readonly endedAt?: number;
  /** Who asked: a certificate's name, or `declared` (the fleet file, a molt.dev object). */
  readonly by: string;
  readonly checks: readonly KubeCheck[];
  readonly steps: readonly KubeStep[];
  /** The undo steps, in the order they run, once the plan rolls back. */
  readonly rollback: readonly KubeStep[];
  /** Why it rolled back or failed. */
  readonly reason?: string;
}
