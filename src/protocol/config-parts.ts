// SPDX-License-Identifier: Apache-2.0
/** Pieces the operator config's schemas share (`operator-config.ts`, `dashboard-config.ts`). */
import { z } from 'zod';
import { parseDuration } from '../core/time.ts';

/** A positive duration written like `2s`, `5m` or `1h`, parsed to milliseconds. */
export const duration = z.string().transform((v, ctx) => {
  const ms = parseDuration(v);
  if (ms === undefined || ms <= 0) {
    ctx.addIssue({ code: 'custom', message: `"${v}" is not a duration like 2s, 5m or 1h` });
    return z.NEVER;
  }
  return ms;
});

/** Where a listener binds; port 0 picks a free one. */
export const listenAddress = z.strictObject({
  host: z.string().min(1).default('127.0.0.1'),
  port: z.number().int().min(0).max(65_535),
});
