// SPDX-License-Identifier: Apache-2.0
/**
 * `molt dev publish-kubernetes`: the control-plane binaries of one Kubernetes version as a
 * Kubernetes bundle (docs/adr/0012 §2, format in `core/kubernetes/bundle.ts`), pushed one binary
 * at a time (each ~100 MB, never all in memory) and tagged with the version. The binaries come
 * from `--from DIR`, by default from `scripts/ensure-kube-bins.sh <version>`'s cache (built when
 * missing). Their own `--version` must say the version published: a bundle is never mislabelled.
 */
import { execFile } from 'node:child_process';
import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { z } from 'zod';
import {
  BundleBinaryNames,
  bundleManifest,
  KubeBundleFormat,
  type BundleBinary,
} from '../../../core/kubernetes/bundle.ts';
import { ErrorCode, MoltError } from '../../../protocol/index.ts';
import { KubeVersion } from '../../../protocol/agent-kubernetes.ts';
import { createRegistryClient, MediaType } from '../../../oci/index.ts';
import { attachLegacySignature, signLegacy } from '../../../releases/index.ts';
import { kubeBinaries } from '../../../platform/kube/binaries.ts';
import type { CommandContext } from '../../context.ts';
import { parseFlags } from '../../flags.ts';
import { renderData } from '../../output.ts';
import { registryFlags, registryHost } from '../../registry-flags.ts';

const run = promisify(execFile);

const schema = z.object({
  version: KubeVersion,
  from: z.string().min(1).optional(),
  tag: z.array(z.string().regex(/^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$/, 'is not a tag')),
  signKey: z.string().min(1).optional(),
});

/** The binaries in `dir` a bundle carries, refusing a directory without the control plane. */
async function binariesIn(dir: string): Promise<string[]> {
  const present: string[] = [];
  for (const name of BundleBinaryNames)
    if (
      await access(join(dir, name)).then(
        () => true,
        () => false,
      )
    )
      present.push(name);
  const missing = ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler'].filter(
    (n) => !present.includes(n),
  );
  if (missing.length > 0)
    throw new MoltError(ErrorCode.BadFlag, `--from ${dir} has no ${missing.join(', ')}`, {
      hint: 'give the directory scripts/ensure-kube-bins.sh <version> prints',
    });
  return present;
}

/** The version `kube-apiserver --version` reports (`Kubernetes v1.36.3`). */
async function versionOf(dir: string): Promise<string> {
  try {
    const { stdout } = await run(join(dir, 'kube-apiserver'), ['--version'], { timeout: 30_000 });
    return stdout.trim().replace(/^Kubernetes /, '');
  } catch (e) {
    throw new MoltError(ErrorCode.BadFlag, `${join(dir, 'kube-apiserver')} --version failed`, {
      cause: e,
    });
  }
}

export async function runPublishKubernetes(
  ctx: CommandContext,
  raw: Record<string, unknown>,
): Promise<void> {
  const flags = await registryFlags(raw, ctx.io.env);
  const o = parseFlags(schema, raw);
  const dir =
    o.from ??
    (await kubeBinaries((line) => {
      ctx.io.err(`${line}\n`);
    }, o.version));
  const names = await binariesIn(dir);
  const built = await versionOf(dir);
  if (built !== o.version)
    throw new MoltError(ErrorCode.BadFlag, `${dir} holds Kubernetes ${built}, not ${o.version}`, {
      hint: 'publish the version the binaries are, or give --from the right directory',
    });
  const client = createRegistryClient(flags.client);
  const repo = flags.repository;
  try {
    const binaries: BundleBinary[] = [];
    for (const name of names) {
      const d = await client.pushBlob(
        repo,
        new Uint8Array(await readFile(join(dir, name))),
        KubeBundleFormat.binaryMediaType,
      );
      binaries.push({ name: name as BundleBinary['name'], digest: d.digest, size: d.size });
    }
    await client.pushBlob(repo, new TextEncoder().encode('{}'), MediaType.OciEmpty);
    const manifest = new TextEncoder().encode(JSON.stringify(bundleManifest(o.version, binaries)));
    const tags = o.tag.length === 0 ? [o.version] : o.tag;
    let digest = '';
    for (const tag of tags)
      digest = await client.pushManifest(repo, tag, manifest, MediaType.OciManifest);
    const name = `${registryHost(flags.client.registry)}/${repo}`;
    const signature =
      o.signKey === undefined
        ? null
        : await attachLegacySignature({
            client,
            repository: repo,
            digest,
            signature: signLegacy({
              privateKeyPem: await readKey(o.signKey),
              digest,
              reference: name,
            }),
          });
    const published = {
      bundle: `${name}@${digest}`,
      version: o.version,
      tags,
      binaries,
      signature,
    };
    ctx.io.out(
      flags.output === 'table'
        ? `published Kubernetes ${o.version} (${names.join(', ')}) as ${tags.map((t) => `${name}:${t}`).join(', ')}\n${published.bundle}\n`
        : renderData(flags.output, published),
    );
  } finally {
    await client.close();
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
