// SPDX-License-Identifier: Apache-2.0
/** The Kubernetes version as configuration, pure (docs/adr/0012): path, checks, plan, rollback. */
export * from './types.ts';
export * from './version.ts';
export {
  checkKubeletSkew,
  KUBELET_MAX_MINORS_OLDER,
  type ApiServerVersion,
  type KubeletSkewVerdict,
} from './kubelet-skew.ts';
export { checkPath, clusterFrom, type KubeMove, type PathVerdict } from './path.ts';
export { RemovedFlags, removedFlagsIn, type RemovedFlag } from './removed-flags.ts';
export {
  describeApi,
  parseDeprecatedApis,
  removedApisInUse,
  type DeprecatedApi,
} from './deprecated-apis.ts';
export {
  machineOrder,
  planSteps,
  sameSpec,
  targetSpec,
  type PlanInput,
  type PlanResult,
} from './plan.ts';
export {
  finished,
  nextStep,
  rollBackPlan,
  rollbackSteps,
  stepDone,
  stepFailed,
  stepStarted,
  type NextStep,
  type StepList,
} from './progress.ts';
export {
  runChecks,
  type CheckInput,
  type CheckRefusal,
  type CheckResult,
  type MachineRelease,
} from './checks.ts';
export {
  planNeeded,
  sameExtraArgs,
  settledBy,
  type DesiredKube,
  type PlanNeed,
} from './desired.ts';
