// SPDX-License-Identifier: Apache-2.0
/**
 * Commands that run until ctrl-C (`molt rollout list --watch`, `molt machine list --watch`,
 * `molt history --follow`): ctrl-C is how a person ends them, so it ends them with exit 0 — the
 * loop is told to stop and the connections are dropped at once, so the process exits without
 * waiting for an open event stream.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isMoltError } from '../protocol/index.ts';
import type { CommandContext } from './context.ts';

/**
 * Run `work` until it ends, or until ctrl-C: then abort its signal, call `stop` (drop the
 * connections) and return normally.
 */
export async function untilInterrupted(
  ctx: CommandContext,
  work: (signal: AbortSignal) => Promise<void>,
  stop: () => Promise<void>,
): Promise<void> {
  const controller = new AbortController();
  let off = (): void => undefined;
  const interrupted = new Promise<'interrupted'>((resolve) => {
    off = ctx.io.onInterrupt(() => {
      resolve('interrupted');
    });
  });
  const running = work(controller.signal);
  try {
    const how = await Promise.race([running.then(() => 'done' as const), interrupted]);
    if (how === 'done') return;
    controller.abort();
    running.catch(() => undefined);
    await stop();
  } finally {
    off();
  }
}

/** Options of {@link watch}. */
export interface WatchOptions<T> {
  /** Ask the daemon again. */
  readonly fetch: () => Promise<T>;
  /** The text to print for a value; printed again only when it changed. */
  readonly render: (value: T) => string;
  /** @default 2000 */
  readonly intervalMs?: number;
  /** Drop the connection (ctrl-C). */
  readonly stop: () => Promise<void>;
}

/**
 * Print `render(fetch())`, then poll every 2 s and print it again whenever it changed, until
 * ctrl-C. A daemon that is away for a while (restarting, failing over) is waited out, said once.
 */
export function watch<T>(ctx: CommandContext, o: WatchOptions<T>): Promise<void> {
  return untilInterrupted(
    ctx,
    async (signal) => {
      let last: string | undefined;
      let away = false;
      while (!signal.aborted) {
        try {
          const text = o.render(await o.fetch());
          away = false;
          if (text !== last) ctx.io.out(last === undefined ? text : `\n${text}`);
          last = text;
        } catch (e) {
          if (!isMoltError(e) || !e.retryable || last === undefined) throw e;
          if (!away) ctx.io.err(`lost the operator (${e.code}: ${e.message}); still watching…\n`);
          away = true;
        }
        await sleep(o.intervalMs ?? 2000, undefined, { signal });
      }
    },
    o.stop,
  );
}
