// SPDX-License-Identifier: Apache-2.0
/** Kubernetes plans as the API shows them (`protocol/operator-kubernetes.ts`): ISO times, flat steps. */
import type { KubeStep, KubeUpgrade } from '../../core/kubernetes/types.ts';
import { iso } from '../../core/time.ts';
import type { KubePlanView, KubeStepView } from '../../protocol/operator-kubernetes.ts';

export function stepView(s: KubeStep): KubeStepView {
  return {
    id: s.id,
    machine: s.machine,
    action: s.action,
    state: s.state,
    ...(s.component !== undefined && { component: s.component }),
    ...(s.spec !== undefined && { version: s.spec.version }),
    ...(s.spec?.emulatedVersion !== undefined && { emulatedVersion: s.spec.emulatedVersion }),
    ...(s.startedAt !== undefined && { startedAt: iso(s.startedAt) }),
    ...(s.finishedAt !== undefined && { finishedAt: iso(s.finishedAt) }),
    ...(s.error !== undefined && { error: s.error }),
  };
}

export function planView(p: KubeUpgrade): KubePlanView {
  return {
    id: p.id,
    cluster: p.cluster,
    kind: p.kind,
    phase: p.phase,
    from: p.from,
    target: {
      version: p.target.version,
      bundle: p.target.bundle,
      finalize: p.target.finalize,
      ...(p.target.emulatedVersion !== undefined && { emulatedVersion: p.target.emulatedVersion }),
    },
    by: p.by,
    createdAt: iso(p.createdAt),
    ...(p.endedAt !== undefined && { endedAt: iso(p.endedAt) }),
    ...(p.reason !== undefined && { reason: p.reason }),
    checks: [...p.checks],
    steps: p.steps.map(stepView),
    rollback: p.rollback.map(stepView),
  };
}
