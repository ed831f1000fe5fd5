// SPDX-License-Identifier: Apache-2.0
import { ErrorCode, isMoltError } from '../core/errors.ts';

/**
 * Text for an error that ended a command. A {@link MoltError} is an expected failure: its code,
 * message and hint, never a stack trace. Anything else is a bug in molt and keeps its stack so it
 * can be reported.
 */
export function describeError(e: unknown): string {
  if (isMoltError(e)) {
    const hint = e.hint === undefined ? '' : `\n  hint: ${e.hint}`;
    return `error ${e.code}: ${e.message}${hint}\n`;
  }
  const stack = e instanceof Error ? (e.stack ?? e.message) : String(e);
  return `error ${ErrorCode.Internal}: molt hit an unexpected error (a bug — please report it)\n${stack}\n`;
}
