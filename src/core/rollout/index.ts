// SPDX-License-Identifier: Apache-2.0
/** The operator's pure planner (docs/adr/0005): model, validation, windows, plan and simulation. */
export * from './types.ts';
export { plan, explain } from './plan.ts';
export type { Refusal } from './candidate.ts';
export { phasedFraction } from './checks.ts';
export { simulate } from './simulate.ts';
export type { NeverStarted, ScheduledStart, Schedule, SimulateOptions } from './simulate.ts';
export { validatePolicies } from './validate.ts';
export {
  describeInstant,
  isAllowed,
  isWindowOpen,
  nextOpening,
  OPENING_HORIZON_MS,
} from './windows.ts';
export type { Opening, WindowPolicy } from './windows.ts';
export { hashWariness, orderHash, warinessOf } from './wariness.ts';
export { limitOf } from './rules.ts';
