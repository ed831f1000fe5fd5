// SPDX-License-Identifier: Apache-2.0
/**
 * The files of a container image layer as data, and the gzip tar layer made of them with the `tar`
 * library. Every header is written from the entry alone — owner as given (root unless said), one
 * fixed mtime, no atime or ctime — and entries are written in path order, so the same files make
 * the same layer bytes on any machine, whatever its clock, umask or directory order.
 */
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Header, PackSync, Parser, ReadEntry } from 'tar';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { MediaType, type LayerInput } from '../../oci/index.ts';

interface Owner {
  readonly uid?: number;
  readonly gid?: number;
}

/** One entry; paths are relative to the image's root (`usr/lib/`), directories end in `/`. */
export type LayerEntry =
  | ({ readonly kind: 'dir'; readonly path: string; readonly mode: number } & Owner)
  | ({
      readonly kind: 'file';
      readonly path: string;
      readonly mode: number;
      readonly data: Uint8Array;
    } & Owner)
  | { readonly kind: 'symlink'; readonly path: string; readonly target: string }
  /** A hard link to `target`, a path of the same layer written before it. */
  | { readonly kind: 'hardlink'; readonly path: string; readonly target: string };

/** The mtime of every entry (2026-01-01T00:00:00Z): no build machine's clock reaches a layer. */
export const EntryMtime = new Date(Date.UTC(2026, 0, 1));

const typeOf = {
  dir: 'Directory',
  file: 'File',
  symlink: 'SymbolicLink',
  hardlink: 'Link',
} as const;

/** Order by path component, so a directory comes right before what it holds. */
export function comparePaths(a: string, b: string): number {
  const x = a.replace(/\/$/, '').split('/');
  const y = b.replace(/\/$/, '').split('/');
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const [p, q] = [x[i] ?? '', y[i] ?? ''];
    if (p !== q) return p < q ? -1 : 1;
  }
  return x.length - y.length;
}

export const sortEntries = (entries: readonly LayerEntry[]): LayerEntry[] =>
  [...entries].sort((a, b) => comparePaths(a.path, b.path));

function readEntry(e: LayerEntry): ReadEntry {
  const data = e.kind === 'file' ? e.data : undefined;
  const link = e.kind === 'symlink' || e.kind === 'hardlink';
  const header = new Header({
    path: e.path,
    type: typeOf[e.kind],
    mode: link ? 0o777 : e.mode,
    uid: link ? 0 : (e.uid ?? 0),
    gid: link ? 0 : (e.gid ?? 0),
    size: data?.byteLength ?? 0,
    mtime: EntryMtime,
    ...(link && { linkpath: e.target }),
  });
  const entry = new ReadEntry(header);
  if (data !== undefined) entry.write(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  entry.end();
  return entry;
}

/** The uncompressed tar archive of `entries`, sorted by path. */
export function tarArchive(entries: readonly LayerEntry[]): Buffer {
  const chunks: Buffer[] = [];
  // Not `portable`: it drops the owners (nonroot's home must stay 65532's) and sticky bits (/tmp).
  // Headers carry numeric ids only: they are what a runtime applies.
  const pack = new PackSync({ strict: true });
  pack.on('data', (c: Buffer) => chunks.push(c));
  for (const e of sortEntries(entries)) pack.add(readEntry(e));
  pack.end();
  return Buffer.concat(chunks);
}

/** A gzip tar layer (OCI media type) of `entries`. */
export function gzipLayer(entries: readonly LayerEntry[]): LayerInput {
  // zlib writes no name or time into the gzip header, so equal archives compress to equal bytes.
  return {
    mediaType: MediaType.OciLayerGzip,
    bytes: new Uint8Array(gzipSync(tarArchive(entries))),
  };
}

const clean = (path: string): string => path.replace(/^\.\//, '').replace(/^\/+/, '');

const fileTypes: ReadonlySet<string> = new Set(['File', 'OldFile', 'ContiguousFile']);

/** The entry `e` of a read archive; null for what a layer does not carry (devices, FIFOs). */
function entryOf(e: ReadEntry, data: Buffer): LayerEntry | null {
  const path = clean(e.path);
  const owner = { uid: e.uid ?? 0, gid: e.gid ?? 0 };
  const mode = (e.mode ?? 0o644) & 0o7777;
  if (e.type === 'Directory')
    return path === '' ? null : { kind: 'dir', path: path.replace(/\/?$/, '/'), mode, ...owner };
  if (fileTypes.has(e.type))
    return { kind: 'file', path, mode, data: new Uint8Array(data), ...owner };
  if (e.type === 'SymbolicLink') return { kind: 'symlink', path, target: e.linkpath ?? '' };
  if (e.type === 'Link') return { kind: 'hardlink', path, target: clean(e.linkpath ?? '') };
  // Device nodes and FIFOs: a container runtime makes /dev itself.
  return null;
}

/** The entries of an uncompressed tar archive (mmdebstrap's root tree), in archive order. */
export function readTar(bytes: Uint8Array, what: string): LayerEntry[] {
  const entries: LayerEntry[] = [];
  const parser = new Parser({
    strict: true,
    onReadEntry: (e) => {
      const chunks: Buffer[] = [];
      e.on('data', (c: Buffer) => chunks.push(c));
      e.on('end', () => {
        const entry = entryOf(e, Buffer.concat(chunks));
        if (entry !== null) entries.push(entry);
      });
    },
  });
  let failure: unknown;
  parser.on('error', (error: unknown) => {
    failure = error;
  });
  parser.end(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  if (failure !== undefined)
    throw new MoltError(ErrorCode.ImageBuildFailed, `${what} is not a readable tar archive`, {
      cause: failure,
    });
  return entries;
}

/**
 * The files under `dir` as entries under `prefix` (`usr/lib/molt/`), owned by root: a file's mode
 * is 0755 when any execute bit is set and 0644 otherwise, so the umask of whoever unpacked the
 * tree does not reach the layer.
 */
export async function treeEntries(dir: string, prefix: string): Promise<LayerEntry[]> {
  const out: LayerEntry[] = [{ kind: 'dir', path: prefix, mode: 0o755 }];
  const listed = await readdir(dir, { recursive: true, withFileTypes: true });
  for (const d of listed) {
    const full = join(d.parentPath, d.name);
    const path = prefix + relative(dir, full).split(sep).join('/');
    const st = await lstat(full);
    if (st.isDirectory()) out.push({ kind: 'dir', path: `${path}/`, mode: 0o755 });
    else if (st.isSymbolicLink()) out.push({ kind: 'symlink', path, target: await readlink(full) });
    else if (st.isFile())
      out.push({
        kind: 'file',
        path,
        mode: (st.mode & 0o111) === 0 ? 0o644 : 0o755,
        data: new Uint8Array(await readFile(full)),
      });
  }
  return out;
}
