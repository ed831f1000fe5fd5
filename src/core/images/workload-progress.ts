// SPDX-License-Identifier: Apache-2.0
/**
 * A workload's rollout read from its own status, the way `kubectl rollout status` reads it
 * (docs/adr/0013 §4): kubernetes/kubernetes
 * `staging/src/k8s.io/kubectl/pkg/polymorphichelpers/rollout_status.go`, the `Status` methods of
 * `DeploymentStatusViewer`, `DaemonSetStatusViewer` and `StatefulSetStatusViewer`. Every kind first
 * waits for its controller to observe the spec (`status.observedGeneration >= metadata.generation`),
 * so a spec change just written never reads as already done.
 *
 * Where kubectl refuses (an `OnDelete` update strategy) this says `progressing` until the counts
 * show the new revision everywhere: pods are replaced only when someone deletes them.
 */
import type { WorkloadKind } from './types.ts';

export type WorkloadProgress =
  | { readonly state: 'progressing'; readonly message: string }
  | { readonly state: 'available' }
  | { readonly state: 'failed'; readonly reason: string; readonly message: string };

/** The Deployment controller's reason on `Progressing` once `progressDeadlineSeconds` passed. */
export const ProgressDeadlineExceeded = 'ProgressDeadlineExceeded';

type Json = Readonly<Record<string, unknown>>;

const obj = (v: unknown): Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {};
const num = (v: unknown, fallback = 0): number =>
  typeof v === 'number' && Number.isFinite(v) ? v : fallback;
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

const progressing = (message: string): WorkloadProgress => ({ state: 'progressing', message });
const available: WorkloadProgress = { state: 'available' };

interface Parts {
  readonly name: string;
  readonly spec: Json;
  readonly status: Json;
  readonly observed: boolean;
}

function parts(kind: WorkloadKind, object: unknown): Parts {
  const o = obj(object);
  const meta = obj(o['metadata']);
  const status = obj(o['status']);
  const generation = num(meta['generation'], 1);
  const observedGeneration = num(status['observedGeneration']);
  return {
    name: `${kind}/${str(meta['namespace']) ?? ''}/${str(meta['name']) ?? ''}`,
    spec: obj(o['spec']),
    status,
    // kubectl's StatefulSet viewer also treats a never-observed object (0) as not observed.
    observed: observedGeneration > 0 && observedGeneration >= generation,
  };
}

function deployment(p: Parts): WorkloadProgress {
  const { status: s, spec } = p;
  const conditions = Array.isArray(s['conditions']) ? s['conditions'].map(obj) : [];
  const cond = conditions.find((c) => c['type'] === 'Progressing');
  if (cond?.['reason'] === ProgressDeadlineExceeded)
    return {
      state: 'failed',
      reason: ProgressDeadlineExceeded,
      message: `${p.name} exceeded its progress deadline: ${str(cond['message']) ?? ''}`.trim(),
    };
  const want = num(spec['replicas'], 1);
  const updated = num(s['updatedReplicas']);
  const replicas = num(s['replicas']);
  const availableReplicas = num(s['availableReplicas']);
  if (updated < want)
    return progressing(`${String(updated)} of ${String(want)} new replicas updated`);
  if (replicas > updated)
    return progressing(`${String(replicas - updated)} old replicas pending termination`);
  if (availableReplicas < updated)
    return progressing(
      `${String(availableReplicas)} of ${String(updated)} updated replicas available`,
    );
  return available;
}

function daemonSet(p: Parts): WorkloadProgress {
  const s = p.status;
  const desired = num(s['desiredNumberScheduled']);
  const updated = num(s['updatedNumberScheduled']);
  const availableNumber = num(s['numberAvailable']);
  if (updated < desired)
    return progressing(`${String(updated)} of ${String(desired)} new pods updated`);
  if (availableNumber < desired)
    return progressing(`${String(availableNumber)} of ${String(desired)} updated pods available`);
  return available;
}

function statefulSet(p: Parts): WorkloadProgress {
  const { status: s, spec } = p;
  const want = num(spec['replicas'], 1);
  const ready = num(s['readyReplicas']);
  if (ready < want) return progressing(`${String(want - ready)} pods not ready`);
  const updated = num(s['updatedReplicas']);
  const strategy = obj(spec['updateStrategy']);
  const partition = num(obj(strategy['rollingUpdate'])['partition']);
  if (partition > 0) {
    const due = want - partition;
    return updated < due
      ? progressing(`partitioned: ${String(updated)} of ${String(due)} new pods updated`)
      : available;
  }
  const update = str(s['updateRevision']);
  const current = str(s['currentRevision']);
  if (update !== current && updated < want)
    return progressing(`${String(updated)} of ${String(want)} pods at revision ${update ?? '?'}`);
  return available;
}

/** Read a Deployment, DaemonSet or StatefulSet (plain JSON, as the API returns it). */
export function workloadProgress(kind: WorkloadKind, object: unknown): WorkloadProgress {
  const p = parts(kind, object);
  if (!p.observed) return progressing('waiting for the controller to observe the spec');
  switch (kind) {
    case 'Deployment':
      return deployment(p);
    case 'DaemonSet':
      return daemonSet(p);
    case 'StatefulSet':
      return statefulSet(p);
  }
}
