// SPDX-License-Identifier: Apache-2.0
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { ErrorCode, MoltError } from '../../../protocol/index.ts';
import { createRegistryClient, type LayerInput } from '../../../oci/index.ts';
import { publishRelease, type ReleaseLabels } from '../../../releases/index.ts';
import type { CommandContext } from '../../context.ts';
import { installerLabels, readArtifacts, withDirArtifacts } from './artifacts.ts';
import { renderData } from '../../output.ts';
import { parseFlags } from '../../flags.ts';
import { registryFlags, registryHost } from '../../registry-flags.ts';

const publishSchema = z.object({
  tag: z.array(z.string()).min(1, 'is required (at least one --tag)'),
  version: z.string().min(1).optional(),
  channels: z.string().optional(),
  official: z.boolean().optional(),
  kubernetes: z.string().optional(),
  upgradeFrom: z.string().optional(),
  created: z.iso
    .datetime({ offset: true, message: 'must be an RFC 3339 time such as 2026-11-22T10:00:00Z' })
    .optional(),
  label: z.array(z.string().regex(/^[^=]+=/, 'must be key=value')),
  layer: z.array(z.string().min(1)),
  artifact: z
    .array(z.string().regex(/^[^=]+=.+$/, 'must be name=file, e.g. vmlinuz=./bzImage'))
    .default([]),
  dir: z.string().min(1).optional(),
  signKey: z.string().optional(),
  signFormat: z.enum(['cosign-legacy', 'sigstore-bundle']),
});

const defaultLayerType = 'application/vnd.oci.image.layer.v1.tar';
const mediaTypePattern =
  /^(?:application|text|image|audio|video|font|model|multipart|message)\/[\w.+-]+$/;

/** `molt dev publish`: build an installer image with release labels, push it, optionally sign it. */
export async function runPublish(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  const flags = await registryFlags(raw, ctx.io.env);
  const o = await withDirArtifacts(parseFlags(publishSchema, raw));
  const labels: ReleaseLabels = {
    ...(o.version !== undefined && { version: o.version }),
    ...(o.channels !== undefined && { channels: o.channels.split(',').map((c) => c.trim()) }),
    ...(o.official === true && { official: true }),
    ...(o.kubernetes !== undefined && { kubernetes: o.kubernetes }),
    ...(o.upgradeFrom !== undefined && { upgradeFrom: o.upgradeFrom }),
    created: o.created ?? new Date().toISOString(),
    extra: {
      ...installerLabels(o.artifact, o.version),
      ...Object.fromEntries(
        o.label.map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
      ),
    },
  };
  const artifacts = await readArtifacts(o.artifact);
  const client = createRegistryClient(flags.client);
  try {
    const published = await publishRelease({
      client,
      repository: flags.repository,
      tags: o.tag,
      labels,
      layers: [...artifacts, ...(await Promise.all(o.layer.map(readLayer)))],
      platform: flags.platform,
      ...(o.signKey !== undefined && {
        signing: {
          privateKeyPem: await readKey(o.signKey),
          format: o.signFormat,
          reference: `${registryHost(flags.client.registry)}/${flags.repository}`,
        },
      }),
    });
    ctx.io.out(
      flags.output === 'table'
        ? `published ${published.tags.join(', ')} → ${published.digest}${published.signature === null ? '' : ` (signed: ${published.signature})`}\n`
        : renderData(flags.output, published),
    );
  } finally {
    await client.close();
  }
}

/**
 * `file[:mediaType]`: the part after the last `:` is a media type only when it looks like one
 * (a registered top-level type, `/`, a subtype), so paths that contain `:` still work.
 */
export function parseLayerSpec(spec: string): { path: string; mediaType: string } {
  const at = spec.lastIndexOf(':');
  const suffix = at < 0 ? '' : spec.slice(at + 1);
  if (mediaTypePattern.test(suffix)) return { path: spec.slice(0, at), mediaType: suffix };
  if (at === spec.length - 1) return { path: spec.slice(0, at), mediaType: defaultLayerType };
  return { path: spec, mediaType: defaultLayerType };
}

async function readLayer(spec: string): Promise<LayerInput> {
  const { path, mediaType } = parseLayerSpec(spec);
  try {
    return { mediaType, bytes: new Uint8Array(await readFile(path)) };
  } catch (e) {
    throw new MoltError(ErrorCode.BadFlag, `--layer ${path}: cannot read the file`, { cause: e });
  }
}

async function readKey(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    throw new MoltError(ErrorCode.BadFlag, `--sign-key ${path}: cannot read the file`, {
      cause: e,
    });
  }
}
