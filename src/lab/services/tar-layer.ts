// SPDX-License-Identifier: Apache-2.0
/**
 * Gzip tar layers built in memory with the `tar` library, byte for byte the same for the same
 * entries: every header is written from the entry alone (owner root 0:0, a fixed mtime, no atime,
 * ctime or pax records), so nothing of the machine that builds it — file owners, clocks, the order
 * a directory lists in — reaches the layer's digest.
 */
import { gzipSync } from 'node:zlib';
import { Header, PackSync, ReadEntry } from 'tar';
import { MediaType, type LayerInput } from '../../oci/index.ts';

/** One entry of a layer; paths are relative to the container's root, directories end in `/`. */
export type LayerEntry =
  | { readonly kind: 'dir'; readonly path: string; readonly mode: number }
  | {
      readonly kind: 'file';
      readonly path: string;
      readonly mode: number;
      readonly data: Uint8Array;
    }
  | { readonly kind: 'symlink'; readonly path: string; readonly target: string };

/** The mtime of every entry: 2026-01-01T00:00:00Z. */
export const layerMtime = new Date(Date.UTC(2026, 0, 1));

const typeOf = { dir: 'Directory', file: 'File', symlink: 'SymbolicLink' } as const;

function readEntry(e: LayerEntry): ReadEntry {
  const data = e.kind === 'file' ? e.data : undefined;
  const header = new Header({
    path: e.path,
    type: typeOf[e.kind],
    mode: e.kind === 'symlink' ? 0o777 : e.mode,
    uid: 0,
    gid: 0,
    uname: 'root',
    gname: 'root',
    size: data?.byteLength ?? 0,
    mtime: layerMtime,
    ...(e.kind === 'symlink' && { linkpath: e.target }),
  });
  const entry = new ReadEntry(header);
  if (data !== undefined) entry.write(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  entry.end();
  return entry;
}

/** The uncompressed tar archive of `entries`, in the order given. */
export function tarArchive(entries: readonly LayerEntry[]): Uint8Array {
  const chunks: Buffer[] = [];
  const pack = new PackSync({ strict: true });
  pack.on('data', (c: Buffer) => chunks.push(c));
  for (const e of entries) pack.add(readEntry(e));
  pack.end();
  return new Uint8Array(Buffer.concat(chunks));
}

/** A gzip tar layer (OCI media type) of `entries`. */
export function gzipTarLayer(entries: readonly LayerEntry[]): LayerInput {
  // zlib writes no name or time into the gzip header, so equal archives compress to equal bytes.
  return {
    mediaType: MediaType.OciLayerGzip,
    bytes: new Uint8Array(gzipSync(tarArchive(entries))),
  };
}
