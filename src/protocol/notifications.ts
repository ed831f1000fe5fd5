// SPDX-License-Identifier: Apache-2.0
/**
 * Webhook notifications (docs/adr/0009): what the operator POSTs to each `notifications` sink of
 * its config for every transition in its history, and how a receiver checks it came from the
 * operator. The wire contract; the sender is `operator/adapters/webhook-notifier`.
 *
 * Headers of every delivery:
 *
 * | header | value |
 * |---|---|
 * | `X-Molt-Event-Id` | {@link WebhookNotification.id}: the same on every attempt and from every operator |
 * | `X-Molt-Event` | {@link WebhookNotification.kind} |
 * | `X-Molt-Timestamp` | Unix seconds when this attempt was signed |
 * | `X-Molt-Signature` | `sha256=` + hex HMAC-SHA256, keyed with the sink's secret, of `<timestamp>.<body>` (only with `secretFile`) |
 *
 * A receiver recomputes the HMAC over the timestamp header, a `.` and the raw body bytes, compares
 * in constant time, and refuses a timestamp more than a few minutes from its clock (a replayed
 * delivery); it de-duplicates on the event id: delivery is at least once.
 */
import { KubePlanPhases } from '../core/kubernetes/types.ts';
import { MachinePhases, RolloutStates } from '../core/rollout/vocabulary.ts';

/** Header names, lower-case as Node and undici give them. */
export const WebhookHeaders = {
  eventId: 'x-molt-event-id',
  event: 'x-molt-event',
  timestamp: 'x-molt-timestamp',
  signature: 'x-molt-signature',
} as const;

/** `AwaitingApproval` → `awaiting-approval`. */
export const kebab = (word: string): string =>
  word.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase();

/** The actions a person (or the operator) records as a `decision`. */
export const DecisionNotificationActions = [
  'hold',
  'release',
  'register',
  'deregister',
  'block',
  'unblock',
] as const;

/**
 * Every kind of notification, what a sink's `events` globs select from: `rollout.<state>` when a
 * rollout enters a state, `machine.<phase>` when a machine's upgrade ends, `decision.<action>`,
 * `kubernetes.<phase>` when a Kubernetes plan is made or changes phase, `kubernetes.step` for
 * each of its steps (docs/adr/0012).
 */
export const NotificationKinds: readonly string[] = [
  'rollout.created',
  ...RolloutStates.map((s) => `rollout.${kebab(s)}`),
  'machine.started',
  ...MachinePhases.filter((p) => p !== 'Pending' && p !== 'InFlight').map(
    (p) => `machine.${kebab(p)}`,
  ),
  'machine.rolling-back',
  ...DecisionNotificationActions.map((a) => `decision.${a}`),
  'warning',
  ...KubePlanPhases.map((p) => `kubernetes.${kebab(p)}`),
  'kubernetes.step',
];

/** The body of a `format: json` delivery (`format: slack` is `{text, blocks}` for people). */
export interface WebhookNotification {
  /** Stable for one history event: the key a receiver de-duplicates on. */
  readonly id: string;
  /** The history event's seq in the operator's store (increasing). */
  readonly seq: number;
  /** One of {@link NotificationKinds} (`decision.<action>` for an action added later). */
  readonly kind: string;
  /** When it happened (ISO 8601). */
  readonly at: string;
  /** The operator's one-line description. */
  readonly message: string;
  readonly rollout?: string;
  readonly machine?: string;
  readonly pool?: string;
  /** The rollout's target release. */
  readonly release?: { readonly version: string; readonly digest: string };
  /** Why, when the event says (a halt's failure, a pause's reason, a machine's error). */
  readonly reason?: string;
  /** Who made the change: a certificate name, or `operator` for what the operator decided. */
  readonly by: string;
  /** The history event's own fields (what changed), as `molt history -o json` shows them. */
  readonly data?: Readonly<Record<string, unknown>>;
}
