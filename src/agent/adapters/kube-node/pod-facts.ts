// SPDX-License-Identifier: Apache-2.0
/** What core's drain decision needs of a pod, read from the API's object. */
import type { V1Pod } from '@kubernetes/client-node';
import { keepsEmptyDirData, type PodFacts } from '../../../core/drain/pods.ts';

export function podFacts(p: V1Pod): PodFacts {
  const meta = p.metadata ?? {};
  const owner = meta.ownerReferences?.find((r) => r.controller === true);
  return {
    namespace: meta.namespace ?? '',
    name: meta.name ?? '',
    uid: meta.uid ?? '',
    ...(owner !== undefined && { controllerKind: owner.kind }),
    mirror: meta.annotations?.['kubernetes.io/config.mirror'] !== undefined,
    phase: p.status?.phase ?? 'Unknown',
    terminating: meta.deletionTimestamp !== undefined,
    emptyDir: keepsEmptyDirData(p.spec?.volumes ?? [], meta.annotations),
  };
}
