// SPDX-License-Identifier: Apache-2.0
/**
 * A cluster's Kubernetes as configuration (docs/adr/0012 §1): the version its control plane runs
 * and each component's settings. One schema for both sources — the fleet file's
 * `clusters[].kubernetes` and the spec of a molt.dev `KubernetesCluster` object — as pools are
 * (ADR 0011). The operator turns a change of `version` into a recorded upgrade plan; a change of
 * only `extraArgs` is applied the same way, machine by machine, without a version change.
 *
 * ```yaml
 * clusters:
 *   - name: default
 *     kubernetes:
 *       version: v1.36.3
 *       apiserver: { extraArgs: { audit-log-maxage: "7" } }
 * ```
 */
import { z } from 'zod';
import { ErrorCode } from '../core/errors.ts';
import { insecureFlagError, insecureFlags } from '../core/kubernetes/insecure-flags.ts';
import type { KubeComponent } from '../core/kubernetes/types.ts';
import { ExtraArgs, KubeVersion } from './agent-kubernetes.ts';

const flagName = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'a flag name without dashes');

/**
 * One component's settings. Writing them is cluster-admin-equivalent (any flag of the component);
 * the few flags that open the API to everyone (`core/kubernetes/insecure-flags.ts`) are refused
 * unless `forceInsecureFlags` names them, so opening it is a decision written down, not a slip.
 */
const componentSettings = (component: KubeComponent) =>
  z
    .strictObject({
      extraArgs: ExtraArgs.default({}),
      /** Flags of `extraArgs` kept although they open the API server. @default none */
      forceInsecureFlags: z.array(flagName).max(64).optional(),
    })
    .superRefine((c, ctx) => {
      const forced = new Set(c.forceInsecureFlags ?? []);
      for (const f of insecureFlags(component, c.extraArgs)) {
        if (forced.has(f.flag)) continue;
        ctx.addIssue({
          code: 'custom',
          path: ['extraArgs', f.flag],
          message: `${insecureFlagError(component, f).message}; remove it, or list it in forceInsecureFlags to keep it`,
          params: { code: ErrorCode.KubeFlagInsecure },
        });
      }
    });

export const KubernetesClusterSpec = z.strictObject({
  version: KubeVersion,
  /**
   * Repository of the cluster's Kubernetes bundles (`<repository>:<version>`), in the operator's
   * registry: the default one or a repository the operator config lists in `bundleRepositories`
   * (else MOLT_KUBE_BUNDLE_REPOSITORY_REFUSED when a plan is made).
   * @default the operator's release repository with `-kubernetes` appended
   */
  bundleRepository: z.string().min(1).max(512).optional(),
  apiserver: componentSettings('kube-apiserver').default({ extraArgs: {} }),
  controllerManager: componentSettings('kube-controller-manager').default({ extraArgs: {} }),
  scheduler: componentSettings('kube-scheduler').default({ extraArgs: {} }),
  /**
   * A minor upgrade keeps `--emulated-version=<old minor>` (KEP-4330) until this is `true`, so a
   * rollback to the old binaries stays possible; `true` drops the emulation (the point of no
   * return, recorded as its own step). @default false
   */
  finalize: z.boolean().default(false),
});
export type KubernetesClusterSpec = z.infer<typeof KubernetesClusterSpec>;
export type KubernetesClusterSpecInput = z.input<typeof KubernetesClusterSpec>;
