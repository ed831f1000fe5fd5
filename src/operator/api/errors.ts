// SPDX-License-Identifier: Apache-2.0
/**
 * Every error answer of the operator API is a protocol `ErrorBody` with one code → HTTP status
 * table (STYLE §4.5); anything that is not a MoltError is a bug: 500 MOLT_INTERNAL, never a stack.
 * Input is parsed with protocol's strict zod schemas: an unknown or ill-typed field is
 * MOLT_BAD_INPUT naming the field.
 */
import type { z } from 'zod';
import { ErrorCode, MoltError, isMoltError } from '../../core/errors.ts';
import type { ErrorBody } from '../../protocol/agent.ts';

const statusByCode: Partial<Record<ErrorCode, number>> = {
  [ErrorCode.BadInput]: 400,
  [ErrorCode.TlsRejected]: 401,
  [ErrorCode.Forbidden]: 403,
  [ErrorCode.RolloutNotFound]: 404,
  [ErrorCode.UnknownMachine]: 404,
  [ErrorCode.RolloutState]: 409,
  [ErrorCode.AlreadyStarted]: 409,
  [ErrorCode.EtcdUnhealthy]: 503,
  [ErrorCode.TimedOut]: 504,
};

/** The HTTP status of a MoltError code; unlisted codes are server-side failures (500). */
export function statusForCode(code: ErrorCode): number {
  return statusByCode[code] ?? 500;
}

/** Fastify's own client errors (bad JSON, wrong content type, body too large) carry a 4xx statusCode. */
function frameworkClientError(e: unknown): { status: number; message: string } | undefined {
  if (!(e instanceof Error)) return undefined;
  const status = (e as { statusCode?: unknown }).statusCode;
  if (typeof status !== 'number' || status < 400 || status >= 500) return undefined;
  return { status, message: e.message };
}

/** Status and body for anything a route threw. */
export function errorAnswer(e: unknown): { status: number; body: ErrorBody } {
  if (isMoltError(e)) {
    const body: ErrorBody = {
      code: e.code,
      message: e.message,
      ...(e.hint !== undefined && { hint: e.hint }),
      ...(e.details !== undefined && { details: { ...e.details } }),
    };
    return { status: statusForCode(e.code), body };
  }
  const client = frameworkClientError(e);
  if (client !== undefined)
    return { status: client.status, body: { code: ErrorCode.BadInput, message: client.message } };
  return {
    status: 500,
    body: {
      code: ErrorCode.Internal,
      message: 'the operator hit an unexpected error (a bug in molt); its log has the details',
    },
  };
}

/** Describe the first zod issue as `field: problem`. */
function describeIssue(issue: z.core.$ZodIssue | undefined): string {
  if (issue === undefined) return 'invalid';
  const path = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    const prefix = path === '' ? '' : `${path}.`;
    return `${issue.keys.map((k) => prefix + k).join(', ')}: unknown field`;
  }
  return `${path === '' ? '(body)' : path}: ${issue.message}`;
}

/** Parse `value` with `schema` or throw MOLT_BAD_INPUT naming `what` and the failing field. */
export function parseInput<S extends z.ZodType>(
  schema: S,
  value: unknown,
  what: string,
): z.output<S> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  throw new MoltError(ErrorCode.BadInput, `invalid ${what}: ${describeIssue(r.error.issues[0])}`);
}
