// SPDX-License-Identifier: Apache-2.0
import { z } from 'zod';
import { outputFormats, renderData } from '../../output.ts';
import type { CommandContext } from '../../context.ts';
import { isValidSan } from '../../../platform/pki/certificates.ts';
import { initCaDir, issueToDir, type WrittenCertificate } from '../../../platform/pki/store.ts';
import { parseFlags } from '../../flags.ts';

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
  output,
});

/** `molt pki init`. */
export async function runInit(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  const o = parseFlags(initSchema, raw);
  const written = await initCaDir(o.dir);
  print(ctx, o.output, written, 'fleet CA');
}

/** `molt pki issue`. */
export async function runIssue(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  const o = parseFlags(issueSchema, raw);
  const written = await issueToDir({
    caDir: o.caDir,
    outDir: o.out ?? o.caDir,
    role: o.role,
    name: o.name,
    sans: o.san,
    days: o.days,
  });
  print(ctx, o.output, written, `${o.role} certificate`);
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
