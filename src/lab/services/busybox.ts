// SPDX-License-Identifier: Apache-2.0
/**
 * Debian's static busybox (package `busybox-static`, `/bin/busybox`) as the root file system of
 * the lab's container images: one x86-64 binary with no shared libraries, so a layer holding it
 * alone runs in a container with nothing else.
 */
import { readFile } from 'node:fs/promises';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { gzipTarLayer, type LayerEntry } from './tar-layer.ts';

/** Where Debian installs it (`/bin` is `/usr/bin` on merged-/usr systems). */
export const busyboxPaths: readonly string[] = ['/bin/busybox', '/usr/bin/busybox'];

/**
 * The applets linked in `/bin`: what the lab's pods and probes run, plus the usual shell tools
 * for `kubectl exec`. A fixed list, so the layer does not change with what a build of busybox has.
 */
export const applets: readonly string[] = [
  'cat', 'chmod', 'cp', 'date', 'echo', 'env', 'false', 'grep', 'head', 'hostname', 'httpd',
  'id', 'kill', 'ln', 'ls', 'mkdir', 'mv', 'nc', 'ps', 'rm', 'sed', 'sh', 'sleep', 'tail',
  'test', 'touch', 'true', 'uname', 'wc', 'wget',
]; // prettier-ignore

const missing = (path: string, why: string): MoltError =>
  new MoltError(ErrorCode.ToolMissing, `${path} ${why}`, {
    hint: 'install the static busybox: apt-get install busybox-static (scripts/setup.sh does)',
  });

/**
 * The ELF program headers of an x86-64 executable say whether it needs a dynamic loader
 * (`PT_INTERP`): Debian's `busybox` package (dynamic, glibc) installs the same path as
 * `busybox-static`, and would fail in a container without libc with a bare "no such file".
 */
function checkStatic(path: string, b: Buffer): void {
  const elf = b.length >= 64 && b.readUInt32BE(0) === 0x7f454c46 && b[4] === 2 && b[5] === 1;
  if (!elf || b.readUInt16LE(18) !== 0x3e) throw missing(path, 'is not an x86-64 ELF executable');
  const phoff = Number(b.readBigUInt64LE(32));
  const phentsize = b.readUInt16LE(54);
  const phnum = b.readUInt16LE(56);
  for (let i = 0; i < phnum; i++) {
    const at = phoff + i * phentsize;
    if (at + 4 > b.length) throw missing(path, 'is a truncated ELF file');
    if (b.readUInt32LE(at) === 3) throw missing(path, 'is linked dynamically, not static');
  }
}

/** The static busybox binary: at `path`, or the first of {@link busyboxPaths} that exists. */
export async function readBusybox(path?: string): Promise<Uint8Array> {
  for (const p of path === undefined ? busyboxPaths : [path]) {
    let bytes: Buffer;
    try {
      bytes = await readFile(p);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw e;
    }
    checkStatic(p, bytes);
    return new Uint8Array(bytes);
  }
  throw missing(path ?? busyboxPaths.join(' or '), 'does not exist');
}

/**
 * `/bin/busybox` (0755) with its applets as symlinks beside it, and a world-writable `/tmp`:
 * the layer every lab image starts from.
 */
export function busyboxLayer(busybox: Uint8Array): ReturnType<typeof gzipTarLayer> {
  const entries: LayerEntry[] = [
    { kind: 'dir', path: 'bin/', mode: 0o755 },
    { kind: 'file', path: 'bin/busybox', mode: 0o755, data: busybox },
    ...applets.map((a): LayerEntry => ({ kind: 'symlink', path: `bin/${a}`, target: 'busybox' })),
    { kind: 'dir', path: 'tmp/', mode: 0o1777 },
  ];
  return gzipTarLayer(entries);
}

/** `/www/index.html` with `body`: what `httpd -h /www` serves. */
export function wwwLayer(body: string): ReturnType<typeof gzipTarLayer> {
  return gzipTarLayer([
    { kind: 'dir', path: 'www/', mode: 0o755 },
    { kind: 'file', path: 'www/index.html', mode: 0o644, data: new TextEncoder().encode(body) },
  ]);
}
