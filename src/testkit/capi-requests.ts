// SPDX-License-Identifier: Apache-2.0
/**
 * Cluster API hook requests as a caller writes them, for the extension's tests: one builder, so
 * the tests of forged calls and the property test send the same shape CAPI v1.14.2 sends.
 */
import type { UpdateMachineRequest } from '../protocol/capi-hooks.ts';

/** What a caller puts in an `UpdateMachineRequest` (defaults: Cluster `c1`, `v1.35.0`). */
export interface UpdateRequestFields {
  readonly version?: string | undefined;
  readonly clusterName?: string | undefined;
  readonly annotations?: Record<string, string> | undefined;
  readonly labels?: Record<string, string> | undefined;
}

/** An `UpdateMachineRequest` for Machine `namespace/name`, saying whatever the caller likes. */
export function updateMachineRequest(
  namespace: string,
  name: string,
  o: UpdateRequestFields = {},
): UpdateMachineRequest {
  return {
    apiVersion: 'hooks.runtime.cluster.x-k8s.io/v1alpha1',
    kind: 'UpdateMachineRequest',
    desired: {
      machine: {
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'Machine',
        metadata: {
          name,
          namespace,
          ...(o.labels && { labels: o.labels }),
          ...(o.annotations && { annotations: o.annotations }),
        },
        spec: { clusterName: o.clusterName ?? 'c1', version: o.version ?? 'v1.35.0' },
      },
      infrastructureMachine: {
        apiVersion: 'x/v1',
        kind: 'DevMachine',
        metadata: { name, namespace },
      },
    },
  };
}
