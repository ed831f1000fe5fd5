// SPDX-License-Identifier: Apache-2.0
/**
 * The operator's image routes (docs/adr/0013): what every container an image policy follows runs
 * and what it would move to — read only. Same rules as `operator.ts`: add fields, never rename;
 * times are ISO 8601.
 */
import { z } from 'zod';

export const ImagesOperatorRoutes = {
  /** GET {@link ImagesView}. */
  list: '/v1/images',
  /** GET {@link ImagePlanView}: the image driver's last plan. */
  plan: '/v1/images/plan',
} as const;

/** One container's image in an image rollout, before and after (`core/images/workload.ts` `ImageChange`). */
export const ImageChangeView = z.object({
  container: z.string(),
  from: z.string(),
  to: z.string(),
});
export type ImageChangeView = z.infer<typeof ImageChangeView>;

/**
 * What an image rollout changes, on its rollout views (`RolloutSummaryView.images`): its policy,
 * repository, and per unit (`Kind/namespace/name`) the changes recorded — a unit appears once
 * molt has started it. Absent on a machine rollout.
 */
export const ImageRolloutView = z.object({
  policy: z.string(),
  repository: z.string(),
  units: z.record(z.string(), z.object({ changes: z.array(ImageChangeView) })),
});
export type ImageRolloutView = z.infer<typeof ImageRolloutView>;

/** The kinds of a unit's decision (`core/images/target.ts` `TargetDecision`). */
export const ImageDecisionKinds = ['current', 'move', 'wait', 'skip'] as const;

export const ImageDecisionView = z.object({
  kind: z.enum(ImageDecisionKinds),
  /** `move`: the tag written. */
  tag: z.string().optional(),
  /** `current`: the digest it runs; `move`: the target digest. */
  digest: z.string().optional(),
  /** `move`: `repository:tag@digest`, as it would be written into the pod template. */
  image: z.string().optional(),
  /** `move`: the digest it runs now, when known. */
  from: z.string().optional(),
  /** `move`: platforms the index lacks, taken anyway after the settle. */
  missingPlatforms: z.array(z.string()).optional(),
  /** `wait` / `skip`: TagMissing, Unsigned, PlatformsMissing, GMPinned, … or an error code. */
  reason: z.string().optional(),
  message: z.string().optional(),
});
export type ImageDecisionView = z.infer<typeof ImageDecisionView>;

export const ImageUnitView = z.object({
  /** `Kind/namespace/name`. */
  id: z.string(),
  /** The containers this policy follows in the workload. */
  containers: z.array(z.string()),
  /** The image the first followed container runs (the one the decision is about). */
  image: z.string(),
  /** The workload's own rollout is done. */
  available: z.boolean(),
  decision: ImageDecisionView,
  /**
   * A move's image rollout, when there is one: its id and state, and `refused` when its target is
   * not offered again (it halted, was cancelled or superseded, or a person rolled it back): the
   * unit stays where it is.
   */
  rollout: z
    .object({ id: z.string(), state: z.string(), refused: z.literal(true).optional() })
    .optional(),
});
export type ImageUnitView = z.infer<typeof ImageUnitView>;

export const ImageConflictView = z.object({
  unit: z.string(),
  container: z.string(),
  policies: z.array(z.string()),
});

export const ImagePolicyView = z.object({
  name: z.string(),
  repository: z.string(),
  /** `rebuilds`, `revisions` or `semver <range>`. */
  follow: z.string(),
  units: z.array(ImageUnitView),
  /** Containers this policy and another both select: neither follows them. */
  conflicts: z.array(ImageConflictView),
  /** The policy selects no container at all. */
  empty: z.boolean(),
  /** The repository's scan this call: how many scheme tags, or why it failed. */
  scan: z.object({ tags: z.number().int().nonnegative(), error: z.string().optional() }).optional(),
});
export type ImagePolicyView = z.infer<typeof ImagePolicyView>;

export const ImagesView = z.object({
  /** When the view was taken. */
  at: z.string(),
  /** The `os/arch` the cluster's Nodes run. */
  platforms: z.array(z.string()),
  policies: z.array(ImagePolicyView),
});
export type ImagesView = z.infer<typeof ImagesView>;
