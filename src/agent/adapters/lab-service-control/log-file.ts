// SPDX-License-Identifier: Apache-2.0
/**
 * A service's log file as lines: the last N read backwards from the end (an etcd log grows to
 * hundreds of MB; reading it whole to show 100 lines would not do), then, when following, what is
 * appended, polled — `fs.watch` misses appends by another process on some filesystems. A file that
 * shrinks (truncated, replaced) is read again from its start.
 */
import { open, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { StringDecoder } from 'node:string_decoder';

const chunkBytes = 64 * 1024;
/** Longer lines are cut here, so one runaway line cannot hold the agent's memory. */
export const MaxLineChars = 64 * 1024;

const cut = (line: string): string =>
  line.length > MaxLineChars ? `${line.slice(0, MaxLineChars)}…` : line;

async function sizeOf(path: string): Promise<number | undefined> {
  return stat(path).then(
    (s) => s.size,
    () => undefined,
  );
}

function countNewlines(buf: Buffer): number {
  let n = 0;
  for (let i = buf.indexOf(0x0a); i !== -1; i = buf.indexOf(0x0a, i + 1)) n++;
  return n;
}

/** The last `n` complete or final lines of `path` ending at byte `end`; [] for a missing file. */
export async function lastLines(path: string, n: number, end: number): Promise<string[]> {
  if (n === 0 || end === 0) return [];
  const file = await open(path, 'r').catch(() => undefined);
  if (file === undefined) return [];
  try {
    const chunks: Buffer[] = [];
    let newlines = 0;
    let pos = end;
    // n lines need n+1 newlines before them (or the file's start); a trailing newline ends the last.
    while (pos > 0 && newlines <= n) {
      const size = Math.min(chunkBytes, pos);
      pos -= size;
      const buf = Buffer.alloc(size);
      await file.read(buf, 0, size, pos);
      chunks.unshift(buf);
      newlines += countNewlines(buf);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    const lines = text.split('\n');
    if (lines.at(-1) === '') lines.pop();
    // Unless the read reached the file's start, the first piece is a partial line.
    if (pos > 0) lines.shift();
    return lines.slice(-n).map(cut);
  } finally {
    await file.close();
  }
}

/** Options of {@link logLines}. */
export interface LogLinesOptions {
  readonly tail: number;
  readonly follow: boolean;
  readonly signal: AbortSignal;
  /** @default 250 */
  readonly pollMs?: number;
}

/** Lines appended to a followed file: bytes decoded across reads, a partial last line held back. */
class Appended {
  pos: number;
  private decoder = new StringDecoder('utf8');
  private partial = '';

  constructor(pos: number) {
    this.pos = pos;
  }

  /** The complete lines `path` gained since the last call (a shrunk file is read from its start). */
  async read(path: string): Promise<string[]> {
    const size = await sizeOf(path);
    if (size === undefined || size === this.pos) return [];
    if (size < this.pos) {
      this.pos = 0;
      this.partial = '';
      this.decoder = new StringDecoder('utf8');
    }
    const bytes = await readRange(path, this.pos, size);
    this.pos += bytes.length;
    const lines = (this.partial + this.decoder.write(bytes)).split('\n');
    this.partial = lines.pop() ?? '';
    if (this.partial.length > MaxLineChars) {
      lines.push(this.partial);
      this.partial = '';
    }
    return lines.map(cut);
  }
}

/** The last `tail` lines of `path`, then appended lines while following until `signal` aborts. */
export async function* logLines(path: string, o: LogLinesOptions): AsyncGenerator<string> {
  const end = (await sizeOf(path)) ?? 0;
  for (const line of await lastLines(path, o.tail, end)) yield line;
  if (!o.follow) return;
  const appended = new Appended(end);
  const aborted = (): boolean => o.signal.aborted;
  while (!aborted()) {
    await sleep(o.pollMs ?? 250, undefined, { signal: o.signal }).catch(() => undefined);
    if (aborted()) return;
    for (const line of await appended.read(path)) yield line;
  }
}

async function readRange(path: string, from: number, to: number): Promise<Buffer> {
  const file = await open(path, 'r');
  try {
    const size = Math.min(to - from, 4 * 1024 * 1024);
    const buf = Buffer.alloc(size);
    const { bytesRead } = await file.read(buf, 0, size, from);
    return buf.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
}
