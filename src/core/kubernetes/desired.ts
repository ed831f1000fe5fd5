// SPDX-License-Identifier: Apache-2.0
/**
 * Whether the desired Kubernetes of a cluster asks for a new plan (docs/adr/0012 §1): level-based,
 * from the desired spec, what the machines run and the cluster's latest plan.
 *
 * - A plan still moving: nothing new (one plan per cluster at a time).
 * - The latest plan already aimed at this version and these arguments: nothing — whatever its
 *   outcome. A plan that rolled back is not tried again until the desired spec changes, so a
 *   version that cannot start never flaps between upgrade and rollback.
 * - Otherwise a version other than the one running is an `upgrade`, other arguments a `configure`.
 * - `finalize: true` while components still emulate an older minor, after the plan that brought
 *   the version succeeded: a `finalize` plan (the point of no return is its own recorded phase).
 */
import { clusterFrom } from './path.ts';
import type { ControlPlaneMachine, ExtraArgs, KubeComponent, KubeUpgrade } from './types.ts';
import { KubeComponents, isActivePlan } from './types.ts';
import { compareKubeVersions } from './version.ts';

/** The configuration's spec, as the plan compares it. */
export interface DesiredKube {
  readonly version: string;
  readonly extraArgs: Readonly<Partial<Record<KubeComponent, ExtraArgs>>>;
  readonly finalize: boolean;
}

export type PlanNeed =
  | { readonly kind: 'none'; readonly why: string }
  | { readonly kind: 'upgrade' | 'configure' | 'finalize' };

const argsOf = (a: Readonly<Partial<Record<KubeComponent, ExtraArgs>>>, c: KubeComponent): string =>
  JSON.stringify(Object.entries(a[c] ?? {}).sort(([x], [y]) => (x < y ? -1 : 1)));

/** Whether two per-component argument sets are the same. */
export const sameExtraArgs = (
  a: Readonly<Partial<Record<KubeComponent, ExtraArgs>>>,
  b: Readonly<Partial<Record<KubeComponent, ExtraArgs>>>,
): boolean => KubeComponents.every((c) => argsOf(a, c) === argsOf(b, c));

const emulating = (machines: readonly ControlPlaneMachine[]): boolean =>
  machines.some((m) => m.components.some((c) => c.emulatedVersion !== undefined));

const noArgs = (a: Readonly<Partial<Record<KubeComponent, ExtraArgs>>>): boolean =>
  KubeComponents.every((c) => Object.keys(a[c] ?? {}).length === 0);

/** The latest plan aimed at `desired` already: finalize after it, or nothing. */
function afterCovered(
  desired: DesiredKube,
  machines: readonly ControlPlaneMachine[],
  latest: KubeUpgrade,
): PlanNeed {
  if (!desired.finalize || !emulating(machines)) return { kind: 'none', why: 'up to date' };
  if (latest.kind === 'finalize')
    return { kind: 'none', why: `finalize plan ${latest.id} ${latest.phase}` };
  if (latest.phase !== 'Succeeded')
    return { kind: 'none', why: `plan ${latest.id} ${latest.phase}: not finalizing` };
  return { kind: 'finalize' };
}

const atVersion = (machines: readonly ControlPlaneMachine[], version: string): boolean =>
  machines.every((m) =>
    m.components.every(
      (c) => c.version !== undefined && compareKubeVersions(c.version, version) === 0,
    ),
  );

/**
 * Whether `latest` already settles `desired` whatever the machines run — so a pass need not ask
 * the agents: it aimed at this version and these arguments, and there is no finalize left to make
 * (none asked, its target emulates nothing, it is the finalize, or it did not succeed).
 */
export function settledBy(desired: DesiredKube, latest: KubeUpgrade | undefined): boolean {
  if (latest === undefined || isActivePlan(latest.phase)) return false;
  const covers =
    compareKubeVersions(latest.target.version, desired.version) === 0 &&
    sameExtraArgs(latest.target.extraArgs, desired.extraArgs);
  return (
    covers &&
    (!desired.finalize ||
      latest.target.emulatedVersion === undefined ||
      latest.kind === 'finalize' ||
      latest.phase !== 'Succeeded')
  );
}

/** What plan, if any, `desired` needs now. */
export function planNeeded(
  desired: DesiredKube,
  machines: readonly ControlPlaneMachine[],
  latest: KubeUpgrade | undefined,
): PlanNeed {
  if (latest !== undefined && isActivePlan(latest.phase))
    return { kind: 'none', why: `plan ${latest.id} is ${latest.phase}` };
  if (clusterFrom(machines) === undefined)
    return { kind: 'none', why: 'no control-plane machine reports a version' };
  if (
    latest !== undefined &&
    compareKubeVersions(latest.target.version, desired.version) === 0 &&
    sameExtraArgs(latest.target.extraArgs, desired.extraArgs)
  )
    return afterCovered(desired, machines, latest);
  if (!atVersion(machines, desired.version)) return { kind: 'upgrade' };
  if (latest !== undefined || !noArgs(desired.extraArgs)) return { kind: 'configure' };
  return desired.finalize && emulating(machines)
    ? { kind: 'finalize' }
    : { kind: 'none', why: 'up to date' };
}
