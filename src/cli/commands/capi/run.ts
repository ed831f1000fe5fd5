// SPDX-License-Identifier: Apache-2.0
/** `molt capi extension-config`: the ExtensionConfig for the operator's extension, as YAML. */
import { readFile } from 'node:fs/promises';
import { stringify } from 'yaml';
import { z } from 'zod';
import { ErrorCode, errorMessage, MoltError } from '../../../core/errors.ts';
import { moltExtensionConfig } from '../../../protocol/capi-objects.ts';
import type { CommandContext } from '../../context.ts';
import { parseFlags } from '../../flags.ts';

const schema = z.object({
  url: z
    .url({ protocol: /^https$/, message: 'must be an https:// URL (Cluster API calls only https)' })
    .max(2048),
  ca: z.string().min(1),
  name: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/, 'must be a Kubernetes object name'),
});

export async function runExtensionConfig(
  ctx: CommandContext,
  raw: Record<string, unknown>,
): Promise<void> {
  const o = parseFlags(schema, raw);
  const pem = await readFile(o.ca, 'utf8').catch((e: unknown) => {
    throw new MoltError(ErrorCode.BadFlag, `--ca ${o.ca}: ${errorMessage(e)}`);
  });
  if (!pem.includes('-----BEGIN CERTIFICATE-----'))
    throw new MoltError(ErrorCode.BadFlag, `--ca ${o.ca}: not a PEM certificate`);
  const config = moltExtensionConfig({
    name: o.name,
    url: o.url.replace(/\/$/, ''),
    caBundle: Buffer.from(pem).toString('base64'),
  });
  ctx.io.out(stringify(config));
}
