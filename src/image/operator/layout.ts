// SPDX-License-Identifier: Apache-2.0
/**
 * An OCI image layout directory (image-spec `image-layout.md`): `oci-layout`, `index.json` naming
 * the image by `org.opencontainers.image.ref.name`, and every blob under `blobs/sha256/`: what
 * `skopeo copy oci:DIR:TAG docker://…` and `crane push DIR` read (`ctr images import`, a tar of
 * it). The layout is written beside `--out` and renamed into place, so `--out` holds either the
 * old image or the new one; a directory that is not an image layout is never replaced.
 */
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { MediaType, type BuiltImage } from '../../oci/index.ts';

/** Whether `dir` may be replaced: missing, empty, or an image layout already. */
async function replaceable(dir: string): Promise<boolean> {
  const st = await stat(dir).catch(() => null);
  if (st === null) return true;
  if (!st.isDirectory()) return false;
  const names = await readdir(dir);
  return names.length === 0 || names.includes('oci-layout');
}

/** Refuse an `--out` that is a file or a directory holding something else, before any build. */
export async function checkLayoutTarget(dir: string): Promise<void> {
  if (!(await replaceable(dir)))
    throw new MoltError(
      ErrorCode.BadFlag,
      `--out ${dir} is not empty and holds no OCI image layout`,
      { hint: 'give a new or empty directory (an image layout there is replaced)' },
    );
}

/** `index.json` for `image` under `tag`. */
export function layoutIndex(image: BuiltImage, tag: string): Record<string, unknown> {
  const { platform, ...descriptor } = image.manifest.descriptor;
  return {
    schemaVersion: 2,
    mediaType: MediaType.OciIndex,
    manifests: [
      {
        ...descriptor,
        ...(platform !== undefined && { platform }),
        annotations: { 'org.opencontainers.image.ref.name': tag },
      },
    ],
  };
}

/** Write `image` as an image layout at `dir`, named `tag`. */
export async function writeLayout(dir: string, image: BuiltImage, tag: string): Promise<void> {
  await checkLayoutTarget(dir);
  const target = resolve(dir);
  await mkdir(dirname(target), { recursive: true });
  const tmp = `${target}.tmp-${String(process.pid)}`;
  await rm(tmp, { recursive: true, force: true });
  const blobs = join(tmp, 'blobs', 'sha256');
  await mkdir(blobs, { recursive: true });
  try {
    for (const b of [image.config, ...image.layers, image.manifest])
      await writeFile(join(blobs, b.descriptor.digest.replace(/^sha256:/, '')), b.bytes);
    await writeFile(join(tmp, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}\n');
    await writeFile(join(tmp, 'index.json'), `${JSON.stringify(layoutIndex(image, tag))}\n`);
    await rm(target, { recursive: true, force: true });
    await rename(tmp, target);
  } catch (error) {
    await rm(tmp, { recursive: true, force: true });
    throw error;
  }
}
