// SPDX-License-Identifier: Apache-2.0
/**
 * Image policies (docs/adr/0013): which workloads' containers follow which image repository and
 * which tag tier, rolled out by digest under the pool-style policies machines have. Plain data, as
 * the rollout model is: the fleet file's `images:` and the molt.dev `ImagePolicy` objects both
 * read into it (`protocol/image-policy.ts`).
 */
import type { Policy } from '../rollout/policy.ts';

/** The workload kinds molt changes images of. */
export const WorkloadKinds = ['Deployment', 'DaemonSet', 'StatefulSet'] as const;
export type WorkloadKind = (typeof WorkloadKinds)[number];

/**
 * What a policy follows, read against the tag a container runs (`core/releases/tag.ts` tiers):
 * `rebuilds` — new digests of the intermediate tag `<app>-rev<N>` it runs (a rebuild, same
 * revision); `revisions` — the short tag `<app>`: new `-rev<N>` of the same application version;
 * `semver` — the highest short tag whose version is in `range` (new application versions).
 */
export type ImageFollow =
  | { readonly kind: 'rebuilds' }
  | { readonly kind: 'revisions' }
  | { readonly kind: 'semver'; readonly range: string };

/** Every namespace, when a selector's `namespaces` is exactly `['*']` (written out, never a default). */
export const AllNamespaces = '*';

/** Which containers of which workloads a policy takes. Every given field must match. */
export interface WorkloadSelector {
  /**
   * The namespaces it looks in — always given, so a policy never reaches into a namespace nobody
   * named (another tenant's `web-canary` is not a canary of this one). `['*']`: every namespace,
   * as written. The schema fills it in from the selector's qualified `names` (`shop/web`), or
   * refuses a selector that names no namespace (a policy has none of its own).
   */
  readonly namespaces: readonly string[];
  /** Labels the workload (not its pods) carries; all must match. */
  readonly matchLabels?: Readonly<Record<string, string>>;
  /** @default all of {@link WorkloadKinds} */
  readonly kinds?: readonly WorkloadKind[];
  /**
   * Workloads by `namespace/name`, or by bare `name` within {@link namespaces}. @default any
   */
  readonly names?: readonly string[];
  /** Container names (init containers included). @default every container running the repository */
  readonly containers?: readonly string[];
}

/** A digest kept for good (a GM image): never replaced unless a person says so. */
export interface GmPin {
  readonly digest: string;
  readonly reason: string;
}

export interface ImagePolicy {
  readonly name: string;
  /** `host[:port]/path` without tag or digest: the containers whose image is in it are followed. */
  readonly repository: string;
  readonly follow: ImageFollow;
  /** At least one: a policy naming no workload is refused. */
  readonly workloads: readonly WorkloadSelector[];
  /**
   * Units that go first: workloads in these namespaces, or named `Kind/namespace/name`,
   * `namespace/name` or a bare `name` — bare, only in the namespaces the policy's selectors name
   * (never through `*`). Their rollout soaks `soakMs` before the rest start.
   */
  readonly canary?: {
    readonly namespaces?: readonly string[];
    readonly workloads?: readonly string[];
    readonly soakMs: number;
  };
  /** The rollout-shaping policies machines have (rate, concurrency, window, failure-budget, …). */
  readonly policies: readonly Policy[];
  /** A new digest waits for `molt images approve`. @default false */
  readonly requireApproval?: boolean;
  /** Only digests with a valid signature (the operator's key) are taken. @default false */
  readonly requireSignature?: boolean;
  /**
   * `os/arch[/variant]` an index must carry before it is taken. @default the platforms of the
   * cluster's Nodes
   */
  readonly platforms?: readonly string[];
  /** An index still missing a platform is taken this long after it was first seen. @default 1 h */
  readonly settleMs?: number;
  /** How long a workload may take to become available on a new image. @default 10 min */
  readonly progressTimeoutMs?: number;
  /**
   * What a halted rollout does: put every changed workload back on the image it ran (`rollback`,
   * under the same test ops), or wait for a person (`stop`). @default 'rollback'
   */
  readonly onHalt?: 'stop' | 'rollback';
  readonly gm: readonly GmPin[];
}
