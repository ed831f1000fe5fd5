// SPDX-License-Identifier: Apache-2.0
/**
 * `molt image build --operator` end to end: check the inputs (the Node binary, `--out`), take molt
 * and the Debian base from the build cache (or make them), make the three layers (each cached by
 * the digest of what it holds, so a warm build only writes the config and manifest), then write
 * the OCI image layout and/or push it with molt's OCI client.
 */
import { mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { ImageReference } from '../../core/slots/reference.ts';
import { createRegistryClient, pushImage, type BuiltImage } from '../../oci/index.ts';
import { entryPath } from '../build/cache.ts';
import { ensureMolt, MoltDir, moltTarball, type MoltPackage } from '../build/molt-package.ts';
import { findNode, type NodeBinary } from '../build/node-binary.ts';
import { cacheName, digestOf } from '../build/recipe.ts';
import type { RunOptions } from '../build/tools.ts';
import {
  ensureOperatorBase,
  operatorBaseRecipe,
  type OperatorBase,
  type OperatorBaseRecipe,
} from './base.ts';
import { operatorImage } from './image.ts';
import { builderDigest, cachedLayer, type LayerSummary } from './layer-cache.ts';
import { checkLayoutTarget, writeLayout } from './layout.ts';
import type { OperatorBuildOptions } from './options.ts';
import { commitOf } from './revision.ts';
import { debianLayerEntries, moltLayerEntries, nodeLayerEntries } from './rootfs.ts';
import { readTar, treeEntries, type LayerEntry } from './entries.ts';

/** What `--json` prints. */
export interface OperatorImageSummary {
  readonly digest: string;
  readonly version: string;
  readonly revision?: string;
  readonly node: string;
  readonly layers: readonly LayerSummary[];
  /** Compressed bytes of config and layers: what a node pulls. */
  readonly bytes: number;
  readonly layout?: { readonly dir: string; readonly tag: string };
  readonly pushed?: string;
  readonly cached: { readonly base: boolean; readonly molt: boolean };
  readonly ms: number;
}

/** The base may be made only as root (mmdebstrap --mode=root); a cached one by anyone. */
async function checkCanMakeBase(cache: string, recipe: OperatorBaseRecipe): Promise<void> {
  const entry = entryPath(cache, 'operator-base', cacheName(digestOf(recipe)));
  if (process.getuid?.() === 0 || (await stat(entry).catch(() => null)) !== null) return;
  throw new MoltError(
    ErrorCode.ImageBuildFailed,
    'the operator base is not cached and needs root',
    {
      hint: 'run it once as root (sudo): mmdebstrap extracts the Debian packages as root',
    },
  );
}

function credentials(env: NodeJS.ProcessEnv): { username: string; password: string } | undefined {
  const username = env['MOLT_REGISTRY_USERNAME'];
  const password = env['MOLT_REGISTRY_PASSWORD'];
  if ((username === undefined) !== (password === undefined))
    throw new MoltError(
      ErrorCode.BadFlag,
      'set both MOLT_REGISTRY_USERNAME and MOLT_REGISTRY_PASSWORD, or neither',
    );
  return username === undefined || password === undefined ? undefined : { username, password };
}

async function push(
  ref: ImageReference,
  image: BuiltImage,
  o: { insecure: boolean; env: NodeJS.ProcessEnv },
): Promise<string> {
  const auth = credentials(o.env);
  const client = createRegistryClient({
    registry: ref.registry,
    insecure: o.insecure,
    ...(auth !== undefined && { credentials: auth }),
    // Per request: one monolithic PUT carries Node's 44 MB layer, even over a slow uplink.
    timeoutMs: 600_000,
  });
  try {
    const digest = await pushImage(client, ref.repository, [ref.tag ?? 'latest'], image);
    return `${ref.registry}/${ref.repository}@${digest}`;
  } finally {
    await client.close();
  }
}

/** molt's staged tree, its version and the commit it was built from (when known). */
async function stageMolt(o: OperatorBuildOptions, cache: string, tmp: string, run: RunOptions) {
  const tarball = await moltTarball(o.moltPackage, tmp, run);
  const molt = await ensureMolt(tarball, { cache, fresh: o.noCache, ...run });
  const pkg = JSON.parse(await readFile(join(molt.dir, 'package.json'), 'utf8')) as {
    version?: string;
  };
  if (pkg.version === undefined)
    throw new MoltError(
      ErrorCode.ImageBuildFailed,
      `${tarball.tgz} has no version in package.json`,
    );
  const revision = o.revision ?? (o.moltPackage === undefined ? await commitOf() : undefined);
  return { molt, version: pkg.version, revision };
}

/** The three layers, each from the cache or made now. */
async function makeLayers(
  o: OperatorBuildOptions,
  cache: string,
  inputs: { base: OperatorBase; node: NodeBinary; molt: MoltPackage },
) {
  const builder = await builderDigest();
  const layer = (name: string, input: string, entries: () => Promise<readonly LayerEntry[]>) =>
    cachedLayer(cache, { name, key: digestOf({ input, builder }), fresh: o.noCache, entries });
  const { base, node, molt } = inputs;
  return {
    debian: await layer('debian', base.digest, async () =>
      debianLayerEntries(readTar(await readFile(base.tar), base.tar)),
    ),
    node: await layer('node', node.digest, async () => nodeLayerEntries(await readFile(node.path))),
    molt: await layer('molt', molt.digest, async () =>
      moltLayerEntries(await treeEntries(molt.dir, `${MoltDir}/`)),
    ),
  };
}

/** Write the layout and/or push: what `o` asks for. */
async function deliver(
  o: OperatorBuildOptions,
  image: BuiltImage,
  tag: string,
  env: NodeJS.ProcessEnv,
) {
  if (o.out !== undefined) await writeLayout(o.out, image, tag);
  const pushed =
    o.push === undefined ? undefined : await push(o.push, image, { insecure: o.insecure, env });
  return {
    ...(o.out !== undefined && { layout: { dir: o.out, tag } }),
    ...(pushed !== undefined && { pushed }),
  };
}

/** Check what can be checked before anything is built. */
async function checkInputs(o: OperatorBuildOptions, env: NodeJS.ProcessEnv) {
  const node = await findNode(o.node);
  if (o.out !== undefined) await checkLayoutTarget(o.out);
  if (o.push !== undefined) credentials(env);
  const cache = resolve(o.cache);
  const recipe = operatorBaseRecipe(o.mirrors);
  await checkCanMakeBase(cache, recipe);
  return { node, cache, recipe };
}

/** Build the operator image `o` describes; `log` receives progress lines. */
export async function buildOperatorImage(
  o: OperatorBuildOptions,
  log: (line: string) => void,
  env: NodeJS.ProcessEnv = process.env,
): Promise<OperatorImageSummary> {
  const started = performance.now();
  const run: RunOptions = {
    step: 'operator image',
    ...(o.verbose && {
      onOutput: (text: string) => {
        log(text.trimEnd());
      },
    }),
  };
  const { node, cache, recipe } = await checkInputs(o, env);
  await mkdir(cache, { recursive: true });
  const tmp = await mkdtemp(join(cache, 'tmp-'));
  try {
    const { molt, version, revision } = await stageMolt(o, cache, tmp, run);
    log(`molt ${version}: ${molt.hit ? 'cached' : 'installed'}`);
    const base = await ensureOperatorBase(recipe, { cache, fresh: o.noCache, ...run });
    log(`debian base: ${base.hit ? 'cached' : 'extracted'}`);
    const layers = await makeLayers(o, cache, { base, node, molt });
    const all = [layers.debian, layers.node, layers.molt];
    log(
      `layers: ${all.map((l) => `${l.summary.name} ${l.summary.cached ? 'cached' : 'made'}`).join(', ')}`,
    );
    const image = operatorImage({
      layers: { debian: layers.debian.layer, node: layers.node.layer, molt: layers.molt.layer },
      version,
      created: base.created,
      ...(revision !== undefined && { revision }),
      ...(o.source !== undefined && { source: o.source }),
    });
    const delivered = await deliver(o, image, o.tag ?? o.push?.tag ?? version, env);
    return {
      digest: image.manifest.descriptor.digest,
      version,
      ...(revision !== undefined && { revision }),
      node: node.version,
      layers: all.map((l) => l.summary),
      bytes: [image.config, ...image.layers].reduce((n, b) => n + b.descriptor.size, 0),
      ...delivered,
      cached: { base: base.hit, molt: molt.hit },
      ms: Math.round(performance.now() - started),
    };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}
