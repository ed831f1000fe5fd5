// SPDX-License-Identifier: Apache-2.0
/**
 * Parts of the fleet file's schema (`fleet-schema.ts`): a pool's drain override, and `clusters`
 * — settings of a Kubernetes / etcd cluster, by the name its machines give as `cluster`.
 *
 * ```yaml
 * clusters:
 *   - name: edge-1
 *     smallControlPlane: accept-downtime   # 1 or 2 control-plane machines: upgrade anyway
 *     kubernetes:                          # the control plane's Kubernetes (docs/adr/0012)
 *       version: v1.36.3
 *       apiserver: { extraArgs: { audit-log-maxage: "7" } }
 * ```
 */
import { z } from 'zod';
import { ErrorCode } from '../core/errors.ts';
import type { DrainOverride, DrainTimeoutAction } from '../core/drain/pods.ts';
import type { ClusterPolicy, FleetSnapshot } from '../core/rollout/types.ts';
import type { Report } from './fleet-references.ts';
import { KubernetesClusterSpec } from './kube-cluster.ts';

/** A pool's `drain: {timeout, onTimeout}` as the override its rollouts send (seconds). */
export function drainOverride(d: {
  timeout?: number | undefined;
  onTimeout?: DrainTimeoutAction | undefined;
}): DrainOverride {
  return {
    ...(d.timeout !== undefined && { timeoutSeconds: Math.ceil(d.timeout / 1000) }),
    ...(d.onTimeout !== undefined && { onTimeout: d.onTimeout }),
  };
}

export const clusterSchema = z
  .strictObject({
    name: z.string().min(1, 'must not be empty'),
    smallControlPlane: z.enum(['refuse', 'accept-downtime']).optional(),
    kubernetes: KubernetesClusterSpec.optional(),
  })
  .transform((c): ClusterPolicy => ({
    name: c.name,
    ...(c.smallControlPlane !== undefined && { smallControlPlane: c.smallControlPlane }),
    ...(c.kubernetes !== undefined && { kubernetes: c.kubernetes }),
  }));

/**
 * Each cluster is named once and, when the file lists machines, has control-plane machines among
 * them: a setting for a cluster without etcd would do nothing (machines that only register through
 * the API are not known here, so a file without machines is not checked).
 */
export function checkClusters(fleet: FleetSnapshot, report: Report): void {
  const seen = new Set<string>();
  (fleet.clusters ?? []).forEach((c, i) => {
    if (seen.has(c.name))
      report(ErrorCode.FleetInvalid, [['clusters', i, 'name'], `duplicate name "${c.name}"`]);
    seen.add(c.name);
    const etcd = fleet.machines.some(
      (m) => m.role === 'control-plane' && (m.cluster ?? 'default') === c.name,
    );
    if (fleet.machines.length > 0 && !etcd)
      report(ErrorCode.PolicyInvalid, [
        ['clusters', i, 'name'],
        `cluster "${c.name}" has no control-plane machine (no etcd): its settings would do nothing`,
      ]);
  });
}
