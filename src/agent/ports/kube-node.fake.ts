// SPDX-License-Identifier: Apache-2.0
/** A Kubernetes Node that does every step at once and records what it was asked. */
import { MoltError } from '../../core/errors.ts';
import type { ApiServerVersion } from '../../core/kubernetes/kubelet-skew.ts';
import type { KubeNode } from './kube-node.ts';

export type RecordingKubeNode = KubeNode & { readonly calls: string[] };

/**
 * Each call in `calls` (`cordon`, `drain`, `uncordon`, `ready`). With `apiServer`, the node is in
 * a cluster whose API server runs that version (or answers with that error), asked as `version`;
 * without, it has no API server to ask, as outside a cluster.
 */
export function createRecordingKubeNode(
  apiServer?: ApiServerVersion | MoltError,
): RecordingKubeNode {
  const calls: string[] = [];
  const done = (call: string) => () => {
    calls.push(call);
    return Promise.resolve({ status: 'done' as const });
  };
  return {
    calls,
    cordon: done('cordon'),
    drain: done('drain'),
    uncordon: done('uncordon'),
    ready: done('ready'),
    ...(apiServer !== undefined && {
      apiServer: () => {
        calls.push('version');
        return apiServer instanceof MoltError
          ? Promise.reject(apiServer)
          : Promise.resolve(apiServer);
      },
    }),
  };
}
