// SPDX-License-Identifier: Apache-2.0
/**
 * What the kernel says is mounted (`/proc/self/mountinfo`, proc(5)), and which processes hold a
 * path: read from /proc rather than parsed from `findmnt`/`fuser` output, which changes between
 * util-linux and psmisc versions.
 */
import { readFile, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';

export interface MountEntry {
  readonly mountPoint: string;
  readonly fsType: string;
  /** The mount source: a device path for block filesystems. */
  readonly source: string;
}

/** mountinfo escapes space, tab, newline and backslash as octal (`\040`). */
const unescape = (s: string): string =>
  s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));

export function parseMountinfo(text: string): MountEntry[] {
  const out: MountEntry[] = [];
  for (const line of text.split('\n')) {
    const fields = line.split(' ');
    const dash = fields.indexOf('-');
    const mountPoint = fields[4];
    if (dash < 6 || mountPoint === undefined) continue;
    out.push({
      mountPoint: unescape(mountPoint),
      fsType: fields[dash + 1] ?? '',
      source: unescape(fields[dash + 2] ?? ''),
    });
  }
  return out;
}

const under = (path: string, dir: string): boolean => path === dir || path.startsWith(`${dir}/`);

/** Mounts at `dir` or below it, deepest (and, at one point, newest) first: the unmount order. */
export async function mountsAt(dir: string): Promise<MountEntry[]> {
  const all = parseMountinfo(await readFile('/proc/self/mountinfo', 'utf8'));
  return all
    .map((m, i) => ({ m, i }))
    .filter(({ m }) => under(m.mountPoint, dir))
    .sort((a, b) => b.m.mountPoint.length - a.m.mountPoint.length || b.i - a.i)
    .map(({ m }) => m);
}

/**
 * Processes whose working directory, root or an open file is at or below `dir` (what `fuser -m`
 * finds, minus memory maps), as `PID (comm)`. Best effort: processes that end mid-scan, or that
 * this agent may not inspect, are skipped.
 */
export async function holdersOf(dir: string, limit = 5): Promise<string[]> {
  const found: string[] = [];
  const pids = (await readdir('/proc')).filter((n) => /^\d+$/.test(n) && n !== String(process.pid));
  for (const pid of pids) {
    if (found.length >= limit) break;
    if (await holds(join('/proc', pid), dir)) {
      const comm = (await readFile(join('/proc', pid, 'comm'), 'utf8').catch(() => '?')).trim();
      found.push(`${pid} (${comm})`);
    }
  }
  return found;
}

async function holds(proc: string, dir: string): Promise<boolean> {
  const link = (p: string): Promise<string> => readlink(p).catch(() => '');
  for (const p of ['cwd', 'root']) if (under(await link(join(proc, p)), dir)) return true;
  const fds = await readdir(join(proc, 'fd')).catch(() => []);
  for (const fd of fds) if (under(await link(join(proc, 'fd', fd)), dir)) return true;
  return false;
}
