// SPDX-License-Identifier: Apache-2.0
/**
 * Request validation with protocol's zod schemas. Bodies and queries are strict: an unknown or
 * ill-typed field is MOLT_BAD_INPUT naming the field, so a typo (`presrve: false`) never silently
 * becomes the default.
 */
import { z } from 'zod';
import { ErrorCode, MoltError } from '../../core/errors.ts';

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

const flag = z
  .enum(['true', 'false', '1', '0', ''])
  .transform((v) => v === 'true' || v === '1' || v === '');

/** Query of `GET /v1/events`. */
export const EventsQuery = z
  .object({ operation: z.string().min(1).max(200).optional(), follow: flag.optional() })
  .strict();

/** Query of `GET /v1/logs`. */
export const LogsQuery = z
  .object({ follow: flag.optional(), tail: z.coerce.number().int().min(0).max(100_000).optional() })
  .strict();

/** A `Last-Event-ID` header: `<operationId>:<seq>`. */
export interface EventCursor {
  readonly operationId: string;
  readonly seq: number;
}

/** Parse a `Last-Event-ID` value; malformed ids are MOLT_BAD_INPUT. */
export function parseLastEventId(value: string | string[] | undefined): EventCursor | undefined {
  if (value === undefined || value === '') return undefined;
  const text = Array.isArray(value) ? (value[0] ?? '') : value;
  const m = /^(.+):(\d{1,15})$/.exec(text);
  if (m?.[1] === undefined || m[2] === undefined) {
    throw new MoltError(
      ErrorCode.BadInput,
      `invalid Last-Event-ID "${text}": expected <operationId>:<seq>`,
    );
  }
  return { operationId: m[1], seq: Number(m[2]) };
}
