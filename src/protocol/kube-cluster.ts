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
import { ExtraArgs, KubeVersion } from './agent-kubernetes.ts';

const componentSettings = z.strictObject({ extraArgs: ExtraArgs.default({}) });

export const KubernetesClusterSpec = z.strictObject({
  version: KubeVersion,
  /**
   * Repository of the cluster's Kubernetes bundles (`<repository>:<version>`).
   * @default the operator's release repository with `-kubernetes` appended
   */
  bundleRepository: z.string().min(1).max(512).optional(),
  apiserver: componentSettings.default({ extraArgs: {} }),
  controllerManager: componentSettings.default({ extraArgs: {} }),
  scheduler: componentSettings.default({ extraArgs: {} }),
  /**
   * A minor upgrade keeps `--emulated-version=<old minor>` (KEP-4330) until this is `true`, so a
   * rollback to the old binaries stays possible; `true` drops the emulation (the point of no
   * return, recorded as its own step). @default false
   */
  finalize: z.boolean().default(false),
});
export type KubernetesClusterSpec = z.infer<typeof KubernetesClusterSpec>;
export type KubernetesClusterSpecInput = z.input<typeof KubernetesClusterSpec>;
