// SPDX-License-Identifier: Apache-2.0
/**
 * Command-line flags Kubernetes removed, per component and the minor that removed them: a
 * configuration (`extraArgs`) setting one would keep the component from starting on the target
 * (`unknown flag`), so the plan refuses it before anything moves (`MOLT_KUBE_FLAG_REMOVED`).
 *
 * Sources: for 1.35 → 1.36, the `--help` of the two builds molt runs, diffed by
 * `removed-flags.test.ts` whenever they are cached (no flag was removed: 1.36 only added
 * `tls-curve-preferences` everywhere and `concurrent-resourceclaim-syncs` to the controller
 * manager); earlier removals from the upstream deprecation notices ("will be removed in v1.24",
 * kubernetes/kubernetes#95856, #96345) and changelogs. A flag absent from this table is not
 * proven present: the table errs towards the flags people actually set.
 */
import type { ExtraArgs, KubeComponent } from './types.ts';

/** Flag (without dashes) → the minor that removed it, per component. */
export const RemovedFlags: Readonly<Record<KubeComponent, Readonly<Record<string, string>>>> = {
  'kube-apiserver': {
    // The insecure port: inert since 1.20, removed in 1.24.
    'insecure-port': '1.24',
    'insecure-bind-address': '1.24',
    address: '1.24',
    port: '1.24',
  },
  'kube-controller-manager': {
    // Taint-based eviction replaced it (kube-apiserver's --default-*-toleration-seconds).
    'pod-eviction-timeout': '1.27',
    address: '1.24',
    port: '1.24',
  },
  'kube-scheduler': {
    // Insecure serving: "would be removed in v1.24" (kubernetes/kubernetes#96345).
    address: '1.24',
    port: '1.24',
  },
};

/** A flag of the configuration the target no longer has. */
export interface RemovedFlag {
  readonly component: KubeComponent;
  readonly flag: string;
  /** The minor that removed it. */
  readonly removedIn: string;
}

const minorNum = (m: string): number => Number(m.split('.')[1]);

/**
 * The flags of `extraArgs` (per component) that a binary of minor `targetMinor` (`1.36`) no longer
 * has, in component then flag order.
 */
export function removedFlagsIn(
  extraArgs: Readonly<Partial<Record<KubeComponent, ExtraArgs>>>,
  targetMinor: string,
  table: typeof RemovedFlags = RemovedFlags,
): RemovedFlag[] {
  const found: RemovedFlag[] = [];
  for (const component of Object.keys(table) as KubeComponent[]) {
    const removed = table[component];
    for (const flag of Object.keys(extraArgs[component] ?? {}).sort()) {
      const removedIn = removed[flag];
      if (removedIn !== undefined && minorNum(removedIn) <= minorNum(targetMinor))
        found.push({ component, flag, removedIn });
    }
  }
  return found;
}
