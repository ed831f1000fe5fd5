// SPDX-License-Identifier: Apache-2.0
/**
 * What molt can change in place for Cluster API: only a Machine's Kubernetes version
 * (`spec.version`), by booting the molt release that brings that version — KCP takes the in-place
 * path for nothing else. Given what CAPI sends (current and desired objects), molt either offers
 * a JSON patch on the version that makes current's spec equal desired's under CAPI's own rule
 * (`spec-match.ts`), or offers nothing: CAPI then replaces the Machine. Never "Failure" for a
 * change molt cannot make: a Failure blocks CAPI's rollout instead of falling back.
 */
import {
  differingFields,
  isObject,
  jsonEqual,
  machineSpecForDiff,
  type JsonObject,
} from './spec-match.ts';

/**
 * The molt release that brings a Kubernetes version (`v1.35.0`, a Machine's `spec.version`), or
 * undefined when no release does. The mapping is the operator's (docs/adr/0014); core only asks.
 */
export type ReleaseForVersion = (kubernetesVersion: string) => string | undefined;

/** One JSON Patch (RFC 6902) operation molt emits. */
export interface JsonPatchOp {
  readonly op: 'replace' | 'add';
  readonly path: string;
  readonly value: unknown;
}

/** An object CAPI sends, as far as the decision reads it. */
export interface SpecHolder {
  readonly spec?: JsonObject | undefined;
}

/** CanUpdateMachine's current or desired side. */
export interface MachineSide {
  readonly machine: { readonly spec: JsonObject };
  readonly infrastructureMachine: SpecHolder;
  readonly bootstrapConfig?: SpecHolder | undefined;
}

/** CanUpdateMachineSet's current or desired side (templates compare `spec.template.spec`). */
export interface MachineSetSide {
  readonly machineSet: { readonly spec: { readonly template: { readonly spec: JsonObject } } };
  readonly infrastructureMachineTemplate: SpecHolder;
  readonly bootstrapConfigTemplate?: SpecHolder | undefined;
}

/**
 * The answer: `inPlace` with the patch for the Machine (or MachineSet) spec and the release molt
 * will boot; `replace` (no patch: CAPI falls back to a new Machine) with the reason.
 */
export type InPlaceDecision =
  | {
      readonly kind: 'inPlace';
      readonly version: string;
      readonly release: string;
      readonly patch: readonly JsonPatchOp[];
    }
  | { readonly kind: 'replace'; readonly reason: string };

/** CanUpdateMachine: can molt make `current` into `desired` by changing the Kubernetes version? */
export function decideMachine(
  current: MachineSide,
  desired: MachineSide,
  releaseForVersion: ReleaseForVersion,
): InPlaceDecision {
  const others = otherDifferences([
    [
      'InfrastructureMachine',
      current.infrastructureMachine.spec,
      desired.infrastructureMachine.spec,
    ],
    ['BootstrapConfig', current.bootstrapConfig?.spec, desired.bootstrapConfig?.spec],
  ]);
  return decide(
    { current: current.machine.spec, desired: desired.machine.spec, others, at: '/spec/version' },
    releaseForVersion,
  );
}

/** CanUpdateMachineSet: the same question for a MachineDeployment's old and new MachineSet. */
export function decideMachineSet(
  current: MachineSetSide,
  desired: MachineSetSide,
  releaseForVersion: ReleaseForVersion,
): InPlaceDecision {
  const others = otherDifferences([
    [
      'InfrastructureMachineTemplate',
      templateSpec(current.infrastructureMachineTemplate),
      templateSpec(desired.infrastructureMachineTemplate),
    ],
    [
      'BootstrapConfigTemplate',
      templateSpec(current.bootstrapConfigTemplate),
      templateSpec(desired.bootstrapConfigTemplate),
    ],
  ]);
  return decide(
    {
      current: current.machineSet.spec.template.spec,
      desired: desired.machineSet.spec.template.spec,
      others,
      at: '/spec/template/spec/version',
    },
    releaseForVersion,
  );
}

interface Question {
  readonly current: JsonObject;
  readonly desired: JsonObject;
  /** Differences outside the Machine spec, which molt never patches. */
  readonly others: readonly string[];
  /** Where the version is in the object CAPI patches. */
  readonly at: string;
}

function decide(q: Question, releaseForVersion: ReleaseForVersion): InPlaceDecision {
  const version = q.desired['version'];
  const withVersion = { ...q.current, version };
  const rest = differingFields(machineSpecForDiff(withVersion), machineSpecForDiff(q.desired));
  const reasons = [...q.others, ...rest.map((f) => `Machine spec.${f}`)];
  if (reasons.length > 0)
    return {
      kind: 'replace',
      reason: `molt changes only the Kubernetes version in place; also changed: ${reasons.join(', ')}`,
    };
  if (typeof version !== 'string')
    return { kind: 'replace', reason: 'the desired Machine names no Kubernetes version' };
  if (jsonEqual(q.current['version'], version))
    return { kind: 'replace', reason: 'nothing to change in place' };
  const release = releaseForVersion(version);
  if (release === undefined)
    return { kind: 'replace', reason: `no molt release brings Kubernetes ${version}` };
  const op = Object.hasOwn(q.current, 'version') ? 'replace' : 'add';
  return { kind: 'inPlace', version, release, patch: [{ op, path: q.at, value: version }] };
}

function otherDifferences(
  pairs: readonly (readonly [string, JsonObject | undefined, JsonObject | undefined])[],
): string[] {
  return pairs.filter(([, a, b]) => !jsonEqual(a, b)).map(([what]) => `${what} spec`);
}

function templateSpec(o: SpecHolder | undefined): JsonObject | undefined {
  const template = o?.spec?.['template'];
  const spec = isObject(template) ? template['spec'] : undefined;
  return isObject(spec) ? spec : undefined;
}
