// SPDX-License-Identifier: Apache-2.0
/**
 * A cluster's desired Kubernetes (docs/adr/0012 §1): declared (the fleet file's
 * `clusters[].kubernetes`; later molt.dev objects) or asked for through the API (`molt cluster
 * kubernetes upgrade --to`), which the operator records in its store. The newer word wins: a
 * person's request holds until the declared spec changes — then the declared one does, and the
 * history says who set what. A request made before the operator first read the declared objects
 * holds against what that read finds (it is not a change the request could have seen).
 */
import type { KubernetesClusterSpec } from '../../protocol/kube-cluster.ts';
import type { KubeDesiredRecord } from '../ports/store.ts';
import { recordTransition } from '../transitions/record.ts';
import type { KubePlanDeps } from './deps.ts';

const json = (spec: KubernetesClusterSpec | undefined): string | undefined =>
  spec === undefined ? undefined : JSON.stringify(spec);

/** The desired spec of `cluster` now, without writing anything (what `GET` shows). */
export async function currentDesired(
  d: Pick<KubePlanDeps, 'store' | 'declared'>,
  cluster: string,
): Promise<{ spec: KubernetesClusterSpec; by: string; at?: number } | undefined> {
  const declared = d.declared().specs.get(cluster);
  const stored = await d.store.kubeDesired(cluster);
  if (stored !== undefined && (declared === undefined || holds(stored, json(declared))))
    return { spec: stored.spec, by: stored.by, at: stored.at };
  return declared === undefined ? undefined : { spec: declared, by: 'declared' };
}

/** Whether a recorded word still stands against the declared spec `seen` (JSON). */
const holds = (stored: KubeDesiredRecord, seen: string | undefined): boolean =>
  stored.declaredUnread === true || stored.declared === seen;

/**
 * A request made before the declared objects were read takes what they say now as its baseline:
 * the request is the newer word, and only a later change of the objects replaces it.
 */
async function adoptBaseline(
  d: Pick<KubePlanDeps, 'store' | 'log'>,
  stored: KubeDesiredRecord,
  seen: KubernetesClusterSpec | undefined,
): Promise<void> {
  const { cluster, spec, by, at } = stored;
  const declared = json(seen);
  await d.store.putKubeDesired({
    cluster,
    spec,
    by,
    at,
    ...(declared !== undefined && { declared }),
  });
  d.log(
    `${cluster}: the declared Kubernetes (${seen?.version ?? 'none'}), read after ${by} asked for ${spec.version}, does not replace that request; a change of it will`,
  );
}

/** The desired spec of `cluster` now, recording a declared spec that changed as the new word. */
export async function effectiveDesired(
  d: Pick<KubePlanDeps, 'store' | 'declared' | 'now' | 'log'>,
  cluster: string,
): Promise<KubernetesClusterSpec | undefined> {
  const view = d.declared();
  const declared = view.specs.get(cluster);
  const stored = await d.store.kubeDesired(cluster);
  if (stored?.declaredUnread === true && view.read) {
    await adoptBaseline(d, stored, declared);
    return stored.spec;
  }
  const seen = json(declared);
  if (declared === undefined || stored?.declared === seen) return stored?.spec ?? declared;
  const record: KubeDesiredRecord = {
    cluster,
    spec: declared,
    by: 'declared',
    at: d.now(),
    declared: seen ?? '',
  };
  const changed = stored !== undefined && json(stored.spec) !== seen;
  await recordTransition(d, {
    write: (store) => store.putKubeDesired(record),
    record: changed
      ? {
          log: `${cluster}: the declared Kubernetes changed to ${declared.version}; it replaces what ${stored.by} asked for (${stored.spec.version})`,
          event: {
            kind: 'decision',
            message: `${cluster}: desired Kubernetes ${declared.version} (declared; was ${stored.spec.version} by ${stored.by})`,
            data: {
              cluster,
              version: declared.version,
              by: 'declared',
              was: stored.spec.version,
              wasBy: stored.by,
            },
          },
        }
      : () => undefined,
  });
  return declared;
}

/** Record a person's request as the cluster's desired spec (it holds until the declared one changes). */
export async function requestDesired(
  d: Pick<KubePlanDeps, 'store' | 'declared' | 'now' | 'log'>,
  o: { readonly cluster: string; readonly spec: KubernetesClusterSpec; readonly by: string },
): Promise<void> {
  const view = d.declared();
  const declared = json(view.specs.get(o.cluster));
  await recordTransition(d, {
    write: (store) =>
      store.putKubeDesired({
        cluster: o.cluster,
        spec: o.spec,
        by: o.by,
        at: d.now(),
        ...(declared !== undefined && { declared }),
        ...(declared === undefined && !view.read && { declaredUnread: true }),
      }),
    record: {
      event: {
        kind: 'decision',
        message: `${o.cluster}: desired Kubernetes ${o.spec.version}${o.spec.finalize ? ' (finalized)' : ''}, asked by ${o.by}`,
        data: { cluster: o.cluster, version: o.spec.version, finalize: o.spec.finalize, by: o.by },
      },
    },
  });
}
