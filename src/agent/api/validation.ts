// SPDX-License-Identifier: Apache-2.0
/**
 * The agent's query schemas and its `Last-Event-ID` cursor. Like bodies (parsed with
 * `platform/https/input.ts`), queries are strict: an unknown or ill-typed field is MOLT_BAD_INPUT
 * naming the field, so a typo (`folow=1`) never silently becomes the default.
 */
import { z } from 'zod';
import { ErrorCode, MoltError } from '../../core/errors.ts';

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
