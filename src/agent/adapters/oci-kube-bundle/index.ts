// SPDX-License-Identifier: Apache-2.0
/**
 * {@link KubeBundles} from an OCI registry (docs/adr/0012 §2): a bundle is pulled by digest only,
 * its manifest digest-verified and checked (`core/kubernetes/bundle.ts`: media types, the version
 * annotation, the binaries, the machine's size bound) and — when the machine requires signatures —
 * its signature verified, all before a binary's byte is fetched. Each binary is then streamed
 * into a staging directory, hashed as it is written (`streamBlobTo`), bounded by its descriptor's
 * size, made executable, and the directory renamed to `<root>/state/kubernetes/<digest hex>/`
 * with `bundle.json` inside: a directory there is complete, so a staged bundle is never fetched
 * again, and a failure leaves nothing but a removed staging directory.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { parseImageReference } from '../../../core/slots/reference.ts';
import type { StagedBundle } from '../../../protocol/agent-kubernetes.ts';
import type { KubeBundles } from '../../ports/control-plane.ts';
import { writeFileAtomic, renameDurable } from '../fs/atomic-write.ts';
import type { OciKubeBundlesOptions } from './options.ts';

export type { OciKubeBundlesOptions } from './options.ts';

const StagedFile = z.object({ bundle: z.string(), version: z.string(), digest: z.string() });

/** `host/repo@sha256:<hex>` → its parts; anything else is refused before a request. */
export function bundleParts(bundle: string): {
  registry: string;
  repository: string;
  digest: string;
} {
  const ref = parseImageReference(bundle);
  if (ref.digest?.startsWith('sha256:') !== true)
    throw new MoltError(
      ErrorCode.BadInput,
      `${bundle}: a Kubernetes bundle is pulled by digest only`,
      {
        hint: 'give host/repository@sha256:<64 hex> (molt dev publish-kubernetes prints it)',
      },
    );
  return { registry: ref.registry, repository: ref.repository, digest: ref.digest };
}

export function createOciKubeBundles(o: OciKubeBundlesOptions): KubeBundles {
  const base = join(o.root, 'state', 'kubernetes');
  const dirFor = (bundle: string): string => join(base, bundleParts(bundle).digest.slice(7));
  const inflight = new Map<string, Promise<StagedBundle>>();

  const readStaged = async (dir: string): Promise<StagedBundle | undefined> => {
    const text = await readFile(join(dir, 'bundle.json'), 'utf8').catch(() => undefined);
    let json: unknown;
    try {
      json = text === undefined ? undefined : JSON.parse(text);
    } catch {
      return undefined; // not molt's: the pull that follows says what is wrong with the directory
    }
    const parsed = StagedFile.safeParse(json);
    return parsed.success
      ? { bundle: parsed.data.bundle, version: parsed.data.version, dir }
      : undefined;
  };

  const stageNow = async (bundle: string, version: string | undefined): Promise<StagedBundle> => {
    const parts = bundleParts(bundle);
    const dir = dirFor(bundle);
    const known = await readStaged(dir);
    if (known !== undefined) return checkVersion(known, version);
    await mkdir(base, { recursive: true });
    const temp = join(
      base,
      `.staging-${parts.digest.slice(7, 19)}-${randomBytes(4).toString('hex')}`,
    );
    try {
      await mkdir(temp);
      // The registry client and the signature verifier load at the first pull (P6: an idle
      // agent's memory), as the image source's do.
      const { pullBundle } = await import('./pull.ts');
      const plan = await pullBundle({ ...o, parts, bundle, dir: temp, version });
      for (const b of plan.binaries) await chmod(join(temp, b.name), 0o755);
      await writeFileAtomic(
        join(temp, 'bundle.json'),
        `${JSON.stringify({ bundle, version: plan.version, digest: parts.digest, binaries: plan.binaries }, null, 2)}\n`,
      );
      await renameDurable(temp, dir);
      return { bundle, version: plan.version, dir };
    } finally {
      await rm(temp, { recursive: true, force: true });
    }
  };

  return {
    dirFor,
    async stage(bundle, version) {
      const key = dirFor(bundle);
      const running = inflight.get(key);
      if (running !== undefined) return running.then((s) => checkVersion(s, version));
      const next = stageNow(bundle, version).finally(() => inflight.delete(key));
      inflight.set(key, next);
      return next;
    },
    async staged() {
      const names = await readdir(base).catch(() => [] as string[]);
      const dirs = names.filter((n) => /^[0-9a-f]{64}$/.test(n)).sort();
      const all = await Promise.all(
        dirs.map(async (n) =>
          (await stat(join(base, n))).isDirectory() ? readStaged(join(base, n)) : undefined,
        ),
      );
      return all.filter((s): s is StagedBundle => s !== undefined);
    },
  };
}

function checkVersion(staged: StagedBundle, version: string | undefined): StagedBundle {
  if (version === undefined || version === staged.version) return staged;
  throw new MoltError(
    ErrorCode.KubeBundleInvalid,
    `${staged.bundle} holds Kubernetes ${staged.version}, not ${version} as asked`,
    { hint: 'the version and the bundle of an apply must name the same release' },
  );
}
