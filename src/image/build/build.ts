// SPDX-License-Identifier: Apache-2.0
/**
 * `molt image build` end to end: check the inputs, take the base tree and molt from the cache (or
 * make them), and — unless an image with the same input digest is cached — lay the root tree out,
 * squash it and keep the artifacts under `out/<digest>`; then copy them to `--out` with
 * `image.json`. Nothing is written to `--out` before every artifact exists.
 */
import { constants } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { baseFilesDigest, ensureBase } from './base.ts';
import { cachedEntry } from './cache.ts';
import { treeDigest } from './digest.ts';
import { ensureMolt, moltTarball, type MoltPackage } from './molt-package.ts';
import { findNode, type NodeBinary } from './node-binary.ts';
import { readControlPlaneRuntime, type ControlPlaneRuntime } from './control-plane-runtime.ts';
import { readNodeRuntime, type NodeRuntime } from './node-runtime.ts';
import type { BuildOptions } from './options.ts';
import { baseRecipe, cacheName, digestOf, type BaseRecipe } from './recipe.ts';
import { squash } from './squash.ts';
import { appendVerity, withVerity } from './verity.ts';
import { assembleTree, RootfsFiles } from './tree.ts';
import { ArtifactFiles, summaryOf, type ImageSummary, type Timings } from './summary.ts';
import { runTool, type RunOptions } from './tools.ts';

/**
 * The builder's own code is an input of the image too: a change to how the tree is laid out or
 * squashed (this directory) makes a new image, not a stale cache hit.
 */
const builderDigest = (): Promise<string> => treeDigest(import.meta.dirname, 'the image builder');

async function checkHost(o: BuildOptions): Promise<void> {
  if (process.getuid?.() !== 0)
    throw new MoltError(ErrorCode.ImageBuildFailed, 'molt image build needs root', {
      hint: 'run it as root (sudo): mmdebstrap, chroot and the files of the image are root-owned',
    });
  const out = await stat(o.out).catch(() => null);
  if (out !== null && !out.isDirectory())
    throw new MoltError(ErrorCode.BadFlag, `--out ${o.out} exists and is not a directory`);
}

const since = (t: number): number => Math.round(performance.now() - t);

/** Everything one build works with, once the inputs are read. */
interface Build {
  readonly o: BuildOptions;
  readonly cache: string;
  readonly tmp: string;
  readonly started: number;
  readonly log: (line: string) => void;
  readonly run: RunOptions;
  readonly recipe: BaseRecipe;
  readonly node: NodeBinary;
  readonly kubernetesNode: NodeRuntime | undefined;
  readonly controlPlane: ControlPlaneRuntime | undefined;
  readonly molt: MoltPackage;
  readonly inputDigest: string;
  readonly timings: Timings;
}

/** Squash `tree` into `rootfs` and append its verity hash tree; removes `tree`. */
async function rootFilesystem(b: Build, tree: string, rootfs: string, created: string) {
  let t = performance.now();
  const epoch = Math.floor(Date.parse(created) / 1000);
  await squash(tree, rootfs, { compression: b.o.compression, epoch, log: b.run });
  b.timings.squashMs = since(t);
  await rm(tree, { recursive: true, force: true });
  t = performance.now();
  const verity = await appendVerity(rootfs, b.run);
  b.timings.verityMs = since(t);
  return verity;
}

/** Lay out, squash and summarise the image into the cache entry `dir`. */
async function makeImage(b: Build, dir: string): Promise<void> {
  const { o, timings } = b;
  let t = performance.now();
  const base = await ensureBase(b.recipe, { cache: b.cache, fresh: o.noCache, ...b.run });
  timings.baseMs = since(t);
  b.log(`base: ${base.hit ? 'cached' : 'built'} (${base.kernel}, ${timings.baseMs} ms)`);
  t = performance.now();
  const tree = join(b.tmp, 'tree');
  await mkdir(tree);
  await assembleTree(
    tree,
    {
      base,
      molt: b.molt,
      node: b.node,
      version: o.version,
      overlays: o.overlays,
      enable: o.enable,
      ...(b.kubernetesNode && { kubernetesNode: b.kubernetesNode }),
      ...(b.controlPlane && { controlPlane: b.controlPlane }),
    },
    b.run,
  );
  const treeBytes = Number((await runTool('du', ['-sb', tree], b.run)).split('\t')[0]);
  timings.assembleMs = since(t);
  b.log(`tree: ${Math.round(treeBytes / 2 ** 20)} MiB (${timings.assembleMs} ms)`);
  const verity = await rootFilesystem(b, tree, join(dir, 'rootfs.img'), base.created);
  await copyFile(base.vmlinuz, join(dir, 'vmlinuz'));
  await copyFile(base.initrd, join(dir, 'initrd.img'));
  const cmdline = withVerity(o.cmdline, verity);
  await writeFile(join(dir, 'cmdline'), `${cmdline}\n`);
  timings.totalMs = since(b.started);
  const summary = await summaryOf(dir, { ...b, base, treeBytes, verity, cmdline });
  await writeFile(join(dir, 'image.json'), `${JSON.stringify(summary, null, 2)}\n`);
}

/** The digest of every input of the image: equal digests, equal images. */
function imageDigest(o: BuildOptions, parts: Record<string, unknown>): string {
  return digestOf({
    ...parts,
    enable: o.enable,
    version: o.version,
    cmdline: o.cmdline,
    compression: o.compression,
  });
}

/** Copy the cached artifacts to `--out`, with this run's image.json. */
async function deliver(b: Build, entry: { dir: string; hit: boolean }): Promise<ImageSummary> {
  const built = JSON.parse(await readFile(join(entry.dir, 'image.json'), 'utf8')) as ImageSummary;
  await mkdir(b.o.out, { recursive: true });
  // Each artifact replaces the old one by rename: a reader of --out (a publish, another build
  // of the same release) never sees a file half rewritten (the VM suites caught a torn rootfs).
  for (const name of ArtifactFiles) {
    const part = join(b.o.out, `.${name}.${String(process.pid)}.part`);
    await copyFile(join(entry.dir, name), part, constants.COPYFILE_FICLONE);
    await rename(part, join(b.o.out, name));
  }
  b.timings.totalMs = since(b.started);
  // This run's timings: a cached image took no base, tree or squashfs time.
  const summary: ImageSummary = { ...built, cached: entry.hit, timings: { ...b.timings } };
  await writeFile(join(b.o.out, 'image.json'), `${JSON.stringify(summary, null, 2)}\n`);
  return summary;
}

/** Read (and so check) every input that is not built: before anything is. */
async function readInputs(o: BuildOptions) {
  const node = await findNode(o.node);
  const overlays = [];
  for (const dir of o.overlays) overlays.push(await treeDigest(dir, '--overlay'));
  const kubernetesNode =
    o.kubernetesNode === undefined ? undefined : await readNodeRuntime(o.kubernetesNode);
  const controlPlane =
    o.kubernetesControlPlane === undefined
      ? undefined
      : await readControlPlaneRuntime(o.kubernetesControlPlane);
  const recipe = baseRecipe(o, await baseFilesDigest());
  const rootfsFiles = await treeDigest(RootfsFiles, 'image files');
  const builder = await builderDigest();
  return { node, kubernetesNode, controlPlane, overlays, recipe, rootfsFiles, builder };
}

/** Build the image `o` describes; `log` receives progress lines. */
export async function buildImage(
  o: BuildOptions,
  log: (line: string) => void,
): Promise<ImageSummary> {
  const started = performance.now();
  await checkHost(o);
  const cache = resolve(o.cache);
  const run: RunOptions = {
    step: 'image',
    ...(o.verbose && {
      onOutput: (text: string) => {
        log(text.trimEnd());
      },
    }),
  };
  const { node, kubernetesNode, controlPlane, overlays, recipe, rootfsFiles, builder } =
    await readInputs(o);
  await mkdir(cache, { recursive: true });
  const tmp = await mkdtemp(join(cache, 'tmp-'));
  try {
    const timings: Timings = {
      ...{ moltMs: 0, baseMs: 0, assembleMs: 0, squashMs: 0, verityMs: 0, totalMs: 0 },
    };
    const t = performance.now();
    const tarball = await moltTarball(o.moltPackage, tmp, run);
    const molt = await ensureMolt(tarball, { cache, fresh: o.noCache, ...run });
    timings.moltMs = since(t);
    log(`molt: ${molt.hit ? 'cached' : 'installed'} (${timings.moltMs} ms)`);
    const inputDigest = imageDigest(o, {
      base: digestOf(recipe),
      molt: molt.digest,
      node: node.digest,
      // Undefined (left out of the digest) without a node runtime.
      kubernetesNode: kubernetesNode?.digest,
      controlPlane: controlPlane?.digest,
      rootfsFiles,
      overlays,
      builder,
    });
    const b: Build = {
      o,
      cache,
      tmp,
      started,
      log,
      run,
      recipe,
      node,
      kubernetesNode,
      controlPlane,
      molt,
      inputDigest,
      timings,
    };
    const entry = await cachedEntry({
      cache,
      stage: 'out',
      name: cacheName(inputDigest),
      fresh: o.noCache,
      produce: (dir) => makeImage(b, dir),
    });
    return await deliver(b, entry);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}
