// SPDX-License-Identifier: Apache-2.0
/**
 * Request validation with protocol's zod schemas. Bodies and queries are strict: an unknown or
 * ill-typed field is MOLT_BAD_INPUT naming the field, so a typo (`presrve: false`) never silently
 * becomes the default.
 */
import type { z } from 'zod';
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
