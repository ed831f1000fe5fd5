// SPDX-License-Identifier: Apache-2.0
/**
 * Which tar layer entries an installer image may hold: regular files at the top level whose names
 * are on the artifact allow-list. Anything that could land outside the slot directory, or be
 * something other than bytes in a file (links, devices, FIFOs, directories), is refused before
 * a byte of it is written (docs/adr/0004 §2).
 */
import { ErrorCode, MoltError } from '../errors.ts';
import { ArtifactName } from './slot.ts';

/** The parts of a tar header the check reads (tar's `ReadEntry` has them under these names). */
export interface TarEntryHeader {
  readonly path: string;
  /** tar's type names: `File`, `OldFile`, `ContiguousFile`, `SymbolicLink`, `Link`, `Directory`, … */
  readonly type: string;
}

const regularTypes = new Set(['File', 'OldFile', 'ContiguousFile']);
const allowed: readonly string[] = Object.values(ArtifactName);

function unsafe(path: string, why: string): MoltError {
  return new MoltError(ErrorCode.LayerUnsafePath, `tar layer entry "${path}" ${why}`, {
    hint: 'installer tar layers hold only regular files named vmlinuz, initrd.img, rootfs.img or cmdline at their top level',
  });
}

/**
 * The artifact an entry holds, `undefined` for the root directory entry (`./`, which
 * `tar -C dir .` writes), or a thrown `MOLT_LAYER_UNSAFE_PATH` / `MOLT_IMAGE_INVALID`.
 */
export function checkTarEntry(entry: TarEntryHeader): ArtifactName | undefined {
  const { path, type } = entry;
  if (type === 'Directory' && (path === './' || path === '.')) return undefined;
  const name = checkPath(path);
  if (!regularTypes.has(type)) throw unsafe(path, `is a ${type}, not a regular file`);
  if (name.includes('/') || name.includes('\\')) throw unsafe(path, 'is nested in a directory');
  if (!allowed.includes(name)) {
    throw new MoltError(
      ErrorCode.ImageInvalid,
      `tar layer entry "${path}" is not an installer artifact`,
      {
        hint: `an installer image carries ${allowed.join(', ')} (vmlinuz and rootfs.img required)`,
      },
    );
  }
  return name as ArtifactName;
}

/** The entry's name without a leading `./`, after refusing absolute and `..` names. */
function checkPath(path: string): string {
  if (path.startsWith('/') || /^[a-zA-Z]:/.test(path)) throw unsafe(path, 'has an absolute name');
  const name = path.startsWith('./') ? path.slice(2) : path;
  if (name.split(/[\\/]/).includes('..')) throw unsafe(path, 'climbs out of the slot with ".."');
  if (name === '' || name === '.') throw unsafe(path, 'has no name');
  return name;
}
