// SPDX-License-Identifier: Apache-2.0
/**
 * Every error answer is a protocol `ErrorBody` with one code → HTTP status table (STYLE §4.5).
 * Anything that is not a MoltError is a bug: it answers 500 MOLT_INTERNAL and never leaks a stack.
 */
import { ErrorCode, isMoltError, type MoltError } from '../../core/errors.ts';
import type { ErrorBody } from '../../protocol/agent.ts';

const statusByCode: Partial<Record<ErrorCode, number>> = {
  [ErrorCode.BadInput]: 400,
  [ErrorCode.BadFlag]: 400,
  [ErrorCode.InvalidReference]: 400,
  [ErrorCode.InvalidTag]: 400,
  [ErrorCode.InvalidVersion]: 400,
  [ErrorCode.TlsRejected]: 401,
  [ErrorCode.Forbidden]: 403,
  [ErrorCode.OperationNotFound]: 404,
  [ErrorCode.AgentBusy]: 409,
  [ErrorCode.NoValidSlot]: 409,
  [ErrorCode.LeaseHeld]: 409,
  [ErrorCode.QuorumAtRisk]: 409,
  [ErrorCode.ImageInvalid]: 422,
  [ErrorCode.ImageTooLarge]: 422,
  [ErrorCode.LayerUnsafePath]: 422,
  [ErrorCode.SignatureMissing]: 422,
  [ErrorCode.SignatureInvalid]: 422,
  [ErrorCode.EtcdUnhealthy]: 503,
  [ErrorCode.TimedOut]: 504,
};

/** The HTTP status of a MoltError code; unlisted codes are server-side failures (500). */
export function statusForCode(code: ErrorCode): number {
  return statusByCode[code] ?? 500;
}

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

/** Status and body for anything a route threw. */
export function errorAnswer(e: unknown): { status: number; body: ErrorBody } {
  if (isMoltError(e)) return { status: statusForCode(e.code), body: moltErrorBody(e) };
  const client = frameworkClientError(e);
  if (client !== undefined)
    return { status: client.status, body: { code: ErrorCode.BadInput, message: client.message } };
  return {
    status: 500,
    body: {
      code: ErrorCode.Internal,
      message: 'the agent hit an unexpected error (a bug in molt); the agent log has the details',
    },
  };
}
