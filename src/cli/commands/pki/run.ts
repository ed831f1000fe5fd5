// SPDX-License-Identifier: Apache-2.0
import { z } from 'zod';
import { outputFormats, renderData } from '../../output.ts';
import type { CommandContext } from '../../context.ts';
import { isValidSan } from '../../../platform/pki/certificates.ts';
import { initCaDir, issueToDir, type WrittenCertificate } from '../../../platform/pki/store.ts';
import { parseFlags } from '../../flags.ts';
import { ErrorCode, MoltError } from '../../../protocol/index.ts';
import { ContextName } from '../../../protocol/cli-config.ts';
import { contextOperator, saveIssuedContext } from './context.ts';

const output = z.enum(outputFormats).default('table');

const initSchema = z.object({ dir: z.string().min(1, 'is empty'), output });

const issueSchema = z.object({
  caDir: z.string().min(1, 'is empty'),
  role: z.enum(['node', 'operator', 'admin'], { message: 'must be node, operator or admin' }),
  // The name is a file name and a certificate CN: no slashes, no leading dot.
  name: z
    .string()
    .regex(
      /^[a-zA-Z0-9]([a-zA-Z0-9._-]{0,62}[a-zA-Z0-9])?$/,
      'must be 1-64 letters, digits, dots, dashes or underscores',
    ),
  san: z.array(z.string().refine(isValidSan, 'must be an IP address or a DNS name')).default([]),
  days: z.coerce
    .number({ message: 'must be a number of days' })
    .int('must be a whole number of days')
    .min(1, 'must be at least 1')
    .max(36_500, 'must be at most 36500'),
  out: z.string().min(1).optional(),
  context: ContextName.optional(),
  operator: z.string().min(1).optional(),
  output,
});

/** `molt pki init`. */
export async function runInit(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  const o = parseFlags(initSchema, raw);
  const written = await initCaDir(o.dir);
  print(ctx, o.output, written, 'fleet CA');
}

/** `molt pki issue [--context NAME [--operator URL]]`. */
export async function runIssue(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  const o = parseFlags(issueSchema, raw);
  if (o.operator !== undefined && o.context === undefined)
    throw new MoltError(ErrorCode.BadFlag, '--operator needs --context NAME', {
      hint: 'the operator’s URL is stored in the context the certificate goes into',
    });
  const operator =
    o.context === undefined ? undefined : await contextOperator(ctx.io.env, o.context, o.operator);
  const written = await issueToDir({
    caDir: o.caDir,
    outDir: o.out ?? o.caDir,
    role: o.role,
    name: o.name,
    sans: o.san,
    days: o.days,
  });
  if (o.context === undefined || operator === undefined) {
    print(ctx, o.output, written, `${o.role} certificate`);
    return;
  }
  const context = await saveIssuedContext(ctx.io.env, {
    name: o.context,
    operator,
    cert: written.cert,
    key: written.key,
    caDir: o.caDir,
  });
  if (o.output !== 'table') {
    ctx.io.out(renderData(o.output, { ...written, context }));
    return;
  }
  print(ctx, o.output, written, `${o.role} certificate`);
  ctx.io.out(
    `context ${context.name} saved in ${context.file}: ${context.operator}${context.current ? ' (the current context)' : `; use it: molt config use-context ${context.name}`}\n`,
  );
}

function print(
  ctx: CommandContext,
  format: (typeof outputFormats)[number],
  w: WrittenCertificate,
  what: string,
): void {
  if (format !== 'table') {
    ctx.io.out(renderData(format, w));
    return;
  }
  const sans = w.subjectAltNames === null ? '' : `  names:       ${w.subjectAltNames}\n`;
  ctx.io.out(
    `wrote ${what}\n  certificate: ${w.cert}\n  private key: ${w.key} (mode 0600)\n  subject:     ${w.subject}\n${sans}` +
      `  expires:     ${w.notAfter}\n  sha256:      ${w.fingerprint256}\n`,
  );
}
