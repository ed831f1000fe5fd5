// SPDX-License-Identifier: Apache-2.0
/**
 * The policies that shape a rollout (docs/adr/0005 §2): of machine pools, and of image policies
 * (docs/adr/0013), which plan workloads with the same planner. Re-exported by `types.ts`.
 */

/** A recurring maintenance window: opens at each cron fire time, stays open `durationMs`. */
export interface Window {
  readonly cron: string;
  readonly durationMs: number;
  /** IANA zone the cron expression is read in. @default 'UTC' */
  readonly timeZone?: string;
}

/** A limit is a count of machines, or a percentage of its scope (rounded up, at least 1). */
export type Limit = { readonly count: number } | { readonly percent: number };

/**
 * One policy. Every policy that applies to a machine must allow its start (ADR 0005 §2).
 * `scope` says over which machines a limit is counted: the pool the policy is attached to, or the
 * whole fleet (fleet policies only).
 */
export type Policy =
  | { readonly kind: 'concurrency'; readonly limit: Limit }
  | { readonly kind: 'rate'; readonly count: number; readonly periodMs: number }
  | {
      readonly kind: 'window';
      readonly windows: readonly Window[];
      readonly exclusions?: readonly Window[];
    }
  | {
      readonly kind: 'canary';
      readonly count: number;
      /** Wait this long after the last canary finished before the rest may start. */
      readonly soakMs: number;
    }
  | { readonly kind: 'batches'; readonly soakMs: number }
  | { readonly kind: 'machine-soak'; readonly soakMs: number }
  | { readonly kind: 'zones'; readonly label: string; readonly order?: readonly string[] }
  | { readonly kind: 'control-plane-first' }
  | { readonly kind: 'failure-budget'; readonly maxFailed: number }
  | {
      readonly kind: 'gate';
      /** Names the gate in reasons and in {@link FleetSnapshot.gates}. */
      readonly name: string;
      /** Checked with an HTTP GET by the operator before starts and after each machine. */
      readonly url: string;
      /** @default 200 */
      readonly expectStatus?: number;
      /** @default 5000 */
      readonly timeoutMs?: number;
    };

export type PolicyKind = Policy['kind'];
