// SPDX-License-Identifier: Apache-2.0
/**
 * A FleetLock endpoint (shared/reference/fleetlock.md) on the operator's Fastify server, so Fedora
 * CoreOS nodes running Zincati share molt's reboot semaphores: `POST <prefix>/v1/pre-reboot` takes
 * a slot of the caller's group (recursive), `POST <prefix>/v1/steady-state` releases it
 * (idempotent). Every change is read → pure mutate (`core/fleetlock/semaphore.ts`) → compare-and-
 * swap on the store's revision, retried on conflict, so racing requests never over-grant.
 *
 * Success is exactly 200 with an empty body. Failures are `{kind, value}` JSON with a kind from
 * {@link FleetLockKind} (bounded, as the protocol requires; Zincati counts kinds in its metrics):
 *
 * | status | kind | when |
 * |---|---|---|
 * | 400 | `missing_header` | no `fleet-lock-protocol: true` header (poseidon's kind) |
 * | 400 | `bad_request` | body not JSON, `client_params.id` empty, group not `^[a-zA-Z0-9.-]+$`, … |
 * | 400 | `unknown_group` | a well-formed group molt does not serve (airlock's kind) |
 * | 403 | `forbidden` | the caller may not speak for this id, or the id may not use this group |
 * | 404 | `not_found` | another path under the prefix |
 * | 405 | `method_not_allowed` | anything but POST (with `Allow: POST`) |
 * | 409 | `failed_lock_window_closed` | pre-reboot outside the group's maintenance window |
 * | 423 | `failed_lock_semaphore_full` | pre-reboot while every slot is held by others |
 * | 503 | `store_unavailable` | the store failed, or stayed contended for every retry |
 * | 500 | `internal_error` | a bug in molt (reported to `onInternalError`; never a stack) |
 *
 * Why these codes: refusals a client recovers from by retrying later are 4xx, so 5xx keeps meaning
 * "the server is failing" for alerting (airlock answers a full semaphore with 500, which pages on a
 * normal busy fleet). A full semaphore is 423 Locked, as poseidon/fleetlock answers; a closed
 * window is 409 Conflict — the request conflicts with the group's schedule, not with another
 * holder — so the two read apart in access logs. Clients must not depend on either (reference §5).
 *
 * A caller that already holds a slot gets 200 even when the window has closed since: a machine in
 * flight always completes (docs/adr/0005 §2). steady-state releases regardless of the window.
 *
 * Slots expire: pre-reboot grants or renews a slot until `now + ttl` of the group, and
 * every request to a group first frees its expired slots (`recover`), so a holder that died, or
 * an id that took a slot and never came back, holds the group for one TTL, not for ever. Who may
 * speak for which id is the listener's business ({@link FleetLockOptions.bind}).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { isMoltError } from '../../core/errors.ts';
import {
  GROUP_PATTERN,
  lock,
  unlock,
  withSlots,
  type Semaphore,
} from '../../core/fleetlock/semaphore.ts';
import type { FleetLockStore } from '../ports/fleetlock-store.ts';
import { DEFAULT_FLEETLOCK_TTL_MS, type FleetLockGroup } from './fleetlock-groups.ts';
import { updateSemaphore, type Decision } from './fleetlock-update.ts';

/** The `kind` of every FleetLock error answer, with its HTTP status. */
export const FleetLockKind = {
  missing_header: 400,
  bad_request: 400,
  unknown_group: 400,
  not_found: 404,
  method_not_allowed: 405,
  forbidden: 403,
  failed_lock_window_closed: 409,
  failed_lock_semaphore_full: 423,
  store_unavailable: 503,
  internal_error: 500,
} as const;
export type FleetLockKind = keyof typeof FleetLockKind;

/** The error body the protocol specifies. */
export interface FleetLockError {
  readonly kind: FleetLockKind;
  readonly value: string;
}

/** Options of {@link registerFleetLock}. */
export interface FleetLockOptions {
  readonly store: FleetLockStore;
  /** The configuration of a group, or undefined for a group molt does not serve. */
  readonly groups: (group: string) => FleetLockGroup | undefined;
  /** Epoch ms (the window check's clock). */
  readonly now: () => number;
  /** Zincati's `base_url` path. @default '/fleetlock' */
  readonly prefix?: string;
  /** Compare-and-swap attempts before answering `store_unavailable`. @default 32 */
  readonly maxAttempts?: number;
  /** Told about every 500 (a bug); the answer itself carries no detail. */
  readonly onInternalError?: (error: unknown) => void;
  /**
   * Whether the caller of `request` may speak for `params.id` in `params.group`: undefined when it
   * may, else why not (answered 403 `forbidden`). Absent: anybody may (tests only; each listener
   * binds ids to its callers, `fleetlock-callers.ts`).
   */
  readonly bind?: (
    request: FastifyRequest,
    params: FleetLockParams,
  ) => string | undefined | Promise<string | undefined>;
  /** Told about the holders whose slots expired and were freed (the operator logs them). */
  readonly onRecovered?: (group: string, ids: readonly string[]) => void;
}

/** Paths under the prefix. */
export const FleetLockRoutes = {
  preReboot: '/v1/pre-reboot',
  steadyState: '/v1/steady-state',
} as const;

/** Serve the FleetLock endpoints under `options.prefix`, in their own encapsulated context. */
export async function registerFleetLock(
  app: FastifyInstance,
  options: FleetLockOptions,
): Promise<void> {
  await app.register(
    (scope, _opts, done) => {
      fleetLockRoutes(scope, options);
      done();
    },
    { prefix: options.prefix ?? '/fleetlock' },
  );
}

const BODY_LIMIT = 16 * 1024;

const RequestBody = z.object({
  client_params: z.object({
    id: z.string().min(1, 'must be a non-empty string').max(256, 'must be at most 256 characters'),
    group: z
      .string()
      .max(253, 'must be at most 253 characters')
      .regex(GROUP_PATTERN, `must match ${GROUP_PATTERN.source}`),
  }),
});
/** The `client_params` of a request: who asks, for which group. */
export type FleetLockParams = z.infer<typeof RequestBody>['client_params'];
type ClientParams = FleetLockParams;

type Refusal = { readonly ok: false; readonly error: FleetLockError };
type Outcome = { readonly ok: true } | Refusal;
const OK: Outcome = { ok: true };
const refuse = (kind: FleetLockKind, value: string): Refusal => ({
  ok: false,
  error: { kind, value },
});

function fleetLockRoutes(scope: FastifyInstance, options: FleetLockOptions): void {
  // The spec mandates no Content-Type, so every body is read as text and parsed here.
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser(
    '*',
    { parseAs: 'string', bodyLimit: BODY_LIMIT },
    (_r, body, done) => {
      done(null, body);
    },
  );
  scope.setErrorHandler(async (error, _request, reply) => send(reply, classify(error, options)));
  scope.setNotFoundHandler(async (request, reply) =>
    send(reply, refuse('not_found', `no FleetLock endpoint ${request.method} ${request.url}`)),
  );
  const serve =
    (operation: (params: ClientParams, o: FleetLockOptions) => Promise<Outcome>) =>
    async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
      const params = validate(request);
      if ('error' in params) return send(reply, params);
      const denied = await options.bind?.(request, params);
      if (denied !== undefined) return send(reply, refuse('forbidden', denied));
      return send(reply, await operation(params, options));
    };
  scope.post(FleetLockRoutes.preReboot, serve(preReboot));
  scope.post(FleetLockRoutes.steadyState, serve(steadyState));
  for (const url of Object.values(FleetLockRoutes))
    scope.route({
      method: ['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'],
      url,
      handler: async (request, reply) =>
        send(
          reply.header('allow', 'POST'),
          refuse('method_not_allowed', `${request.method} is not allowed; FleetLock uses POST`),
        ),
    });
}

function send(reply: FastifyReply, outcome: Outcome): FastifyReply {
  if (outcome.ok) return reply.code(200).send();
  return reply.code(FleetLockKind[outcome.error.kind]).send(outcome.error);
}

/** The header, then the body (a well-formed group; whether molt serves it is checked later). */
function validate(request: FastifyRequest): ClientParams | Refusal {
  if (request.headers['fleet-lock-protocol'] !== 'true')
    return refuse('missing_header', "the 'fleet-lock-protocol: true' header is required");
  let json: unknown;
  try {
    json = JSON.parse(typeof request.body === 'string' ? request.body : '');
  } catch {
    return refuse('bad_request', 'the body must be JSON: {"client_params": {"id", "group"}}');
  }
  const parsed = RequestBody.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.join('.') ?? '';
    return refuse(
      'bad_request',
      `${where === '' ? 'body' : where}: ${issue?.message ?? 'invalid'}`,
    );
  }
  return parsed.data.client_params;
}

/**
 * RecursiveLock: 200 when the id holds a slot (renewed) or got one. Expired slots are freed
 * first, and written even when the answer is a refusal, so the record shows who really holds.
 */
async function preReboot(params: ClientParams, o: FleetLockOptions): Promise<Outcome> {
  const group = o.groups(params.group);
  if (group === undefined) return unknownGroup(params.group);
  const now = o.now();
  const ttl = group.ttlMs ?? DEFAULT_FLEETLOCK_TTL_MS;
  const open = group.windowOpen?.(now) ?? true;
  return update(o, { group: params.group, now, ttlMs: ttl }, (current, base) => {
    const r = lock(withSlots(base, group.slots), params.id, now + ttl);
    const recovered = base === current ? undefined : base;
    // Already holding: renewed, even if the window has closed since (a machine in flight completes).
    if (r.reason === 'AlreadyHeld') return { next: r.sem, outcome: OK };
    if (!open)
      return {
        next: recovered,
        outcome: refuse('failed_lock_window_closed', `group ${params.group} is outside its window`),
      };
    if (!r.ok)
      return {
        next: recovered,
        outcome: refuse(
          'failed_lock_semaphore_full',
          `semaphore currently full, all ${group.slots} slots are locked already`,
        ),
      };
    return { next: r.sem, outcome: OK };
  });
}

/** UnlockIfHeld: 200 whether or not the id held a slot. */
async function steadyState(params: ClientParams, o: FleetLockOptions): Promise<Outcome> {
  const group = o.groups(params.group);
  if (group === undefined) return unknownGroup(params.group);
  const ttl = group.ttlMs ?? DEFAULT_FLEETLOCK_TTL_MS;
  return update(o, { group: params.group, now: o.now(), ttlMs: ttl }, (current, base) => ({
    // Nothing stored: nothing to release, and nothing to create.
    next: current === undefined ? undefined : unlock(base, params.id).sem,
    outcome: OK,
  }));
}

const unknownGroup = (group: string): Outcome =>
  refuse('unknown_group', `molt serves no FleetLock group '${group}'`);

/** Read, free expired slots, decide, compare-and-swap: `fleetlock-update.ts`. */
async function update(
  o: FleetLockOptions,
  at: { readonly group: string; readonly now: number; readonly ttlMs: number },
  decide: (current: Semaphore | undefined, base: Semaphore) => Decision<Outcome>,
): Promise<Outcome> {
  const attempts = o.maxAttempts ?? 32;
  const outcome = await updateSemaphore(o, { ...at, attempts }, decide);
  return (
    outcome ??
    refuse('store_unavailable', `group ${at.group} kept changing during ${attempts} attempts`)
  );
}

/** Anything a route threw: Fastify's client errors, store failures, bugs. */
function classify(error: unknown, o: FleetLockOptions): Outcome {
  const status = (error as { statusCode?: unknown } | undefined)?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500 && error instanceof Error)
    // Body too large, malformed request: Fastify's own messages name the problem, nothing internal.
    return { ok: false, error: { kind: 'bad_request', value: error.message } };
  if (isMoltError(error) && ['MOLT_ETCD_UNHEALTHY', 'MOLT_TIMED_OUT'].includes(error.code))
    return refuse('store_unavailable', 'the lock store is unavailable; retry');
  o.onInternalError?.(error);
  return refuse('internal_error', 'molt hit an unexpected error; the operator log has the details');
}
