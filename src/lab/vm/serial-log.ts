// SPDX-License-Identifier: Apache-2.0
/**
 * Reading a VM's serial console log (a file QEMU appends to, across resets and power-ons). Text
 * is decoded as latin1 so that string offsets are byte offsets: a caller can remember where the
 * log ended (`serialSize`) and wait only for what comes after it (the NEXT boot).
 */
import { open, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorCode, MoltError } from '../../core/errors.ts';

/** How often a waiting reader looks at the file again (QEMU gives no other signal). */
const PollMs = 100;

export interface WaitOptions {
  /** Give up after this many milliseconds. */
  readonly deadlineMs: number;
  /** Only text from this byte offset on (e.g. the log's size before a reset). @default 0 */
  readonly from?: number;
  /** Wait for the Nth match after `from`. @default 1 */
  readonly occurrence?: number;
}

/** The log's current size in bytes (0 when it does not exist yet). */
export async function serialSize(file: string): Promise<number> {
  return stat(file).then(
    (s) => s.size,
    () => 0,
  );
}

/** The log from byte `from` on ('' when the file does not exist). */
export async function readSerial(file: string, from = 0): Promise<string> {
  const handle = await open(file, 'r').catch(() => undefined);
  if (handle === undefined) return '';
  try {
    const { size } = await handle.stat();
    if (size <= from) return '';
    const buffer = Buffer.alloc(size - from);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, from);
    return buffer.subarray(0, bytesRead).toString('latin1');
  } finally {
    await handle.close();
  }
}

const AnsiEscape = new RegExp(`${String.fromCharCode(27)}\\[[0-9;=?]*[A-Za-z]`, 'g');

/** The last `chars` of `text` without the firmware's terminal escapes (for error messages). */
export function logTail(text: string, chars = 3000): string {
  return text.replace(AnsiEscape, '').replace(/\r/g, '').slice(-chars);
}

/** The last non-empty line of the log (what `molt lab status` shows), or ''. */
export async function lastLine(file: string): Promise<string> {
  const size = await serialSize(file);
  const lines = logTail(await readSerial(file, Math.max(0, size - 4096)), 4096)
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  return lines.at(-1) ?? '';
}

/** The `n`th match of `pattern` in `text`, its index relative to `text`. */
function nthMatch(text: string, pattern: RegExp, n: number): RegExpExecArray | undefined {
  const global = new RegExp(
    pattern.source,
    pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`,
  );
  let found: RegExpExecArray | null = null;
  for (let i = 0; i < n; i++) {
    found = global.exec(text);
    if (found === null) return undefined;
    if (found[0] === '') global.lastIndex++;
  }
  return found ?? undefined;
}

/**
 * A console wait's clock. Under TCG the guest runs only while QEMU has a host CPU, so on a host
 * shared with other work a boot that takes 100 s alone can take three times that. The deadline is
 * therefore extended by the time the host kept QEMU waiting for a CPU (`starvedMs`, its run-queue
 * wait): a guest that could run and did not print is stuck, one that could not is slow. A paused
 * or sleeping guest waits for no CPU and gets no more time; `Starved` bounds the extension.
 */
const Starved = 3;

/** Why a wait started at `started` (QEMU starved `starved0` ms by then) is over, or undefined. */
async function late(
  o: { readonly deadlineMs: number; readonly starvedMs?: () => Promise<number> },
  started: number,
  starved0: number,
): Promise<string | undefined> {
  const waited = performance.now() - started;
  if (waited <= o.deadlineMs) return undefined;
  const starved = Math.max(0, ((await o.starvedMs?.()) ?? starved0) - starved0);
  const extra = Math.min(starved, (Starved - 1) * o.deadlineMs);
  if (waited <= o.deadlineMs + extra) return undefined;
  if (extra === 0) return `not within ${String(o.deadlineMs)} ms`;
  return `not within ${String(Math.round(waited))} ms (${String(o.deadlineMs)} ms, and ${String(extra)} ms the host kept its CPU from the guest)`;
}

/**
 * Resolve with the `occurrence`th match of `pattern` in `file` after byte `from`; its `index` is
 * the byte offset in the whole log (so `index + match[0].length` is where to wait from next).
 * `stopped()` says the VM is off: the wait then ends at once instead of at the deadline. With
 * `starvedMs` (how long the host has kept the guest from a CPU) the deadline stretches by that.
 * Rejects with MOLT_VM_FAILED and the log's tail.
 */
export async function waitForSerial(
  file: string,
  pattern: RegExp,
  o: WaitOptions & {
    readonly name: string;
    readonly stopped?: () => boolean;
    readonly starvedMs?: () => Promise<number>;
  },
): Promise<RegExpExecArray> {
  const from = o.from ?? 0;
  const started = performance.now();
  const starved0 = (await o.starvedMs?.()) ?? 0;
  for (;;) {
    const off = o.stopped?.() === true; // read before the log: what an exiting VM wrote counts
    const text = await readSerial(file, from);
    const m = nthMatch(text, pattern, o.occurrence ?? 1);
    if (m !== undefined) {
      m.index += from;
      return m;
    }
    const why = off ? 'the VM is off' : await late(o, started, starved0);
    if (why !== undefined) {
      throw new MoltError(
        ErrorCode.VmFailed,
        `VM ${o.name}: ${pattern} (occurrence ${o.occurrence ?? 1} after byte ${from}) never appeared on its console: ${why}; the console's last lines:\n${logTail(text)}`,
        { hint: `the whole console log is ${file}` },
      );
    }
    await sleep(PollMs);
  }
}
