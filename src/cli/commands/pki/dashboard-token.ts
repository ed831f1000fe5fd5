// SPDX-License-Identifier: Apache-2.0
/**
 * `molt pki dashboard-token --name alice --role operator`: a new dashboard sign-in token, printed
 * once, and the line for the operator config's `dashboard.users` with its SHA-256 — the operator
 * keeps only the hash (docs/adr/0007 §12).
 */
import { z } from 'zod';
import { newToken, sha256Hex } from '../../../platform/pki/tokens.ts';
import { DashboardUserRoles, dashboardUserLine } from '../../../protocol/dashboard.ts';
import type { CommandContext } from '../../context.ts';
import { parseFlags } from '../../flags.ts';
import { outputFormats, renderData } from '../../output.ts';

const schema = z.object({
  name: z
    .string()
    .regex(
      /^[a-zA-Z0-9]([a-zA-Z0-9._@-]{0,62}[a-zA-Z0-9])?$/,
      'must be 1-64 letters, digits, dots, dashes, underscores or @',
    ),
  role: z.enum(DashboardUserRoles, { message: 'must be viewer, operator or admin' }),
  output: z.enum(outputFormats).default('table'),
});

/** `molt pki dashboard-token`. */
export function runDashboardToken(ctx: CommandContext, raw: Record<string, unknown>): void {
  const o = parseFlags(schema, raw);
  const token = newToken();
  const tokenSha256 = sha256Hex(token);
  if (o.output !== 'table') {
    ctx.io.out(renderData(o.output, { name: o.name, role: o.role, token, tokenSha256 }));
    return;
  }
  ctx.io.out(
    `dashboard token for ${o.name} (role ${o.role}) — shown once, give it to ${o.name} only:\n` +
      `  ${token}\n` +
      `add to the operator config under dashboard.users, then restart the operator:\n` +
      `  ${dashboardUserLine(o.name, o.role, tokenSha256)}\n`,
  );
}
