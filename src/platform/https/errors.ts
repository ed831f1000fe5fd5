// SPDX-License-Identifier: Apache-2.0
/**
 * Every error answer of a molt API is a protocol `ErrorBody` with one code → HTTP status table
 * (STYLE §4.5). Anything that is not a MoltError is a bug: it answers 500 MOLT_INTERNAL and never
 * leaks a stack. Each API passes its own table: the agent and the operator raise different codes
 * (`MOLT_AGENT_BUSY` is only the agent's, `MOLT_ROLLOUT_NOT_FOUND` only the operator's).
 */
import { ErrorCode, isMoltError, type MoltError } from '../../core/errors.ts';
import type { ErrorBody } from '../../protocol/agent.ts';

/** The status and body of an error answer. */
export interface ErrorAnswer {
  readonly status: number;
  readonly body: ErrorBody;
}

/** Turns anything a route threw into its answer. */
export type ErrorAnswerer = (e: unknown) => ErrorAnswer;

/** The wire body of a MoltError. */
export function moltErrorBody(e: MoltError): ErrorBody {
  return {
    code: e.code,
    message: e.message,
    ...(e.hint !== undefined && { hint: e.hint }),
    ...(e.details !== undefined && { details: { ...e.details } }),
  };
}

/** Fastify's own client errors (bad JSON, wrong content type, body too large) carry a 4xx statusCode. */
function frameworkClientError(e: unknown): { status: number; message: string } | undefined {
  if (!(e instanceof Error)) return undefined;
  const status = (e as { statusCode?: unknown }).statusCode;
  if (typeof status !== 'number' || status < 400 || status >= 500) return undefined;
  return { status, message: e.message };
}

/**
 * The answerer of one API: MoltErrors by `statusByCode` (unlisted codes are server-side failures,
 * 500), framework client errors as MOLT_BAD_INPUT, anything else 500 with `internalMessage`.
 */
export function errorAnswers(
  statusByCode: Readonly<Partial<Record<ErrorCode, number>>>,
  internalMessage: string,
): ErrorAnswerer {
  return (e) => {
    if (isMoltError(e)) return { status: statusByCode[e.code] ?? 500, body: moltErrorBody(e) };
    const client = frameworkClientError(e);
    if (client !== undefined)
      return { status: client.status, body: { code: ErrorCode.BadInput, message: client.message } };
    return { status: 500, body: { code: ErrorCode.Internal, message: internalMessage } };
  };
}
