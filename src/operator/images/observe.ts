// SPDX-License-Identifier: Apache-2.0
/**
 * What every container an image policy follows runs, and what it would move to (docs/adr/0013):
 * the read-only half of the image driver, behind `GET /v1/images` and `molt images list`. One call
 * lists the workloads and the Nodes' platforms once, selects the units (`selectUnits`), scans each
 * repository a unit follows once (concurrently), and resolves one decision per unit on its first
 * followed container (`resolveTarget`, as `plan-input.ts` does). A registry that fails makes that
 * repository's units `wait` with the error's code and message — never the whole call.
 */
import { errorMessage, isMoltError } from '../../core/errors.ts';
import { refusesTarget } from '../../core/images/rollouts.ts';
import { resolveTarget, type TargetDecision } from '../../core/images/target.ts';
import type { ImageFollow, ImagePolicy } from '../../core/images/types.ts';
import { selectUnits, unitId, type ImageUnit, type Selection } from '../../core/images/units.ts';
import type { WorkloadView } from '../../core/images/workload.ts';
import type { Rollout } from '../../core/rollout/types.ts';
import { iso } from '../../core/time.ts';
import type {
  ImageDecisionView,
  ImagePolicyView,
  ImageUnitView,
  ImagesView,
} from '../../protocol/operator-images.ts';
import type { ImageRepositoryScan } from '../../releases/discovery/images.ts';
import type { Workloads } from '../ports/workloads.ts';
import type { GmWatch } from './gm-check.ts';
import type { ImagePlanHolder } from './last-plan.ts';

export interface ImagesDeps {
  /** The image policies in force, live (the fleet file's and the accepted ImagePolicy objects). */
  readonly policies: () => readonly ImagePolicy[];
  readonly workloads: Workloads;
  /** Scan one repository `host[:port]/path` (the operator's scanner and a registry client per host). */
  readonly scan: (repository: string) => Promise<ImageRepositoryScan>;
  /** Epoch ms. */
  readonly now: () => number;
  /** The GM checks' last findings (decision 5, `compose-gm.ts`): the metric reads them. */
  readonly gm?: Pick<GmWatch, 'findings'>;
  /** The driver's last plan: the driver writes it each pass, the API reads it (`last-plan.ts`). */
  readonly lastPlan?: ImagePlanHolder;
}

/** A scan's outcome: the repository, or why it could not be read. */
export type Scanned =
  | { readonly ok: true; readonly scan: ImageRepositoryScan }
  | { readonly ok: false; readonly reason: string; readonly message: string };

/** The reason a failed scan's units wait with: the error's code (a bug's: ScanFailed). */
function failed(e: unknown): Scanned {
  if (isMoltError(e)) return { ok: false, reason: e.code, message: e.message };
  return { ok: false, reason: 'ScanFailed', message: errorMessage(e) };
}

export const followText = (f: ImageFollow): string =>
  f.kind === 'semver' ? `semver ${f.range}` : f.kind;

export function decisionView(d: TargetDecision): ImageDecisionView {
  switch (d.kind) {
    case 'current':
      return { kind: 'current', digest: d.digest };
    case 'move':
      return {
        kind: 'move',
        tag: d.tag,
        digest: d.digest,
        image: d.image,
        ...(d.from !== undefined && { from: d.from }),
        ...(d.missingPlatforms !== undefined && { missingPlatforms: [...d.missingPlatforms] }),
      };
    case 'wait':
      return { kind: 'wait', reason: d.reason, message: d.message };
    case 'skip':
      // A GM pin says the target it would have taken.
      return {
        kind: 'skip',
        reason: d.reason,
        message: d.message,
        ...(d.wouldMoveTo !== undefined && {
          tag: d.wouldMoveTo.tag,
          digest: d.wouldMoveTo.digest,
        }),
      };
  }
}

/** The image the unit's first followed container runs. */
const imageOf = (u: ImageUnit): string =>
  u.workload.containers.find((c) => c.name === u.containers[0])?.image ?? '';

/** Scan every repository a unit follows, once each, concurrently; failures are kept, not thrown. */
async function scanAll(
  d: ImagesDeps,
  repositories: ReadonlySet<string>,
): Promise<ReadonlyMap<string, Scanned>> {
  const done = await Promise.all(
    [...repositories].map(async (r) => {
      try {
        return [r, { ok: true, scan: await d.scan(r) }] as const;
      } catch (e) {
        return [r, failed(e)] as const;
      }
    }),
  );
  return new Map<string, Scanned>(done);
}

/** One read of everything image policies need: what the driver plans from and the views show. */
export interface ImagesRead {
  readonly policies: readonly ImagePolicy[];
  /** Every workload listed, by unit id (`Kind/namespace/name`), followed or not. */
  readonly workloads: ReadonlyMap<string, WorkloadView>;
  readonly platforms: readonly string[];
  readonly selection: Selection;
  /** By repository; a failed scan is kept with its reason. */
  readonly scans: ReadonlyMap<string, Scanned>;
  readonly now: number;
}

/** See the module comment. Fails only when the workloads or the Nodes cannot be listed. */
export async function readImages(d: ImagesDeps): Promise<ImagesRead> {
  const policies = d.policies();
  const [workloads, platforms] = await Promise.all([d.workloads.list(), d.workloads.platforms()]);
  const now = d.now();
  const selection = selectUnits(policies, workloads);
  const byName = new Map(policies.map((p) => [p.name, p]));
  const followed = new Set(selection.units.flatMap((u) => byName.get(u.policy)?.repository ?? []));
  const scans = await scanAll(d, followed);
  return {
    policies,
    workloads: new Map(workloads.map((w) => [unitId(w), w])),
    platforms,
    selection,
    scans,
    now,
  };
}

/** The decision of one unit: its repository's scan read against the unit's first container. */
export function decide(r: ImagesRead, p: ImagePolicy, u: ImageUnit): TargetDecision {
  const s = r.scans.get(p.repository);
  if (s === undefined || !s.ok)
    return {
      kind: 'wait',
      reason: s?.reason ?? 'NotScanned',
      message: s?.message ?? `${p.repository} was not scanned`,
    };
  return resolveTarget(p, imageOf(u), s.scan, { platforms: r.platforms, now: r.now });
}

/** The newest image rollout of `policy` to the move's tag and digest (not a rollback), refused or not. */
function rolloutOf(
  rollouts: readonly Rollout[],
  policy: string,
  d: ImageDecisionView,
): { id: string; state: string; refused?: true } | undefined {
  if (d.kind !== 'move') return undefined;
  const r = rollouts
    .filter(
      (x) =>
        x.images?.policy === policy &&
        x.rollbackOf === undefined &&
        x.target.version === d.tag &&
        x.target.digest === d.digest,
    )
    .sort((a, b) => b.createdAt - a.createdAt)[0];
  if (r === undefined) return undefined;
  return { id: r.id, state: r.state, ...(refusesTarget(r, rollouts) && { refused: true }) };
}

/** What `GET /v1/images` shows; `rollouts` (the store's) name each move's image rollout. */
export async function observeImages(
  d: ImagesDeps,
  rollouts: readonly Rollout[] = [],
): Promise<ImagesView> {
  const read = await readImages(d);
  const { policies, selection, scans, platforms, now } = read;
  const unitView = (p: ImagePolicy, u: ImageUnit): ImageUnitView => {
    const decision = decisionView(decide(read, p, u));
    const rollout = rolloutOf(rollouts, p.name, decision);
    return {
      id: u.id,
      containers: [...u.containers],
      image: imageOf(u),
      available: u.workload.available,
      decision,
      ...(rollout !== undefined && { rollout }),
    };
  };

  const policyView = (p: ImagePolicy): ImagePolicyView => {
    const units = selection.units.filter((u) => u.policy === p.name);
    const s = scans.get(p.repository);
    return {
      name: p.name,
      repository: p.repository,
      follow: followText(p.follow),
      units: units.map((u) => unitView(p, u)),
      conflicts: selection.conflicts
        .filter((c) => c.policies.includes(p.name))
        .map((c) => ({ unit: c.unit, container: c.container, policies: [...c.policies] })),
      empty: selection.empty.includes(p.name),
      ...(s !== undefined && {
        scan: s.ok ? { tags: s.scan.tags.size } : { tags: 0, error: `${s.reason}: ${s.message}` },
      }),
    };
  };

  return { at: iso(now), platforms: [...platforms], policies: policies.map(policyView) };
}
