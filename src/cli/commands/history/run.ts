// SPDX-License-Identifier: Apache-2.0
/**
 * `molt history`: the operator's history (`GET /v1/history`, paged), and with `--follow` its
 * event stream after the last event shown (`GET /v1/events?follow=true`, resumed after the last
 * seq when the operator goes away for a while), until ctrl-C.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import {
  isMoltError,
  type HistoryEventView,
  type OperatorClient,
} from '../../../protocol/index.ts';
import type { CommandContext } from '../../context.ts';
import { parseFlags } from '../../flags.ts';
import { renderData, renderTable, type OutputFormat } from '../../output.ts';
import { untilInterrupted } from '../../watch.ts';
import { resolveRollout, withOperator } from '../rollout/run.ts';
import { historyColumns, historyRow } from './render.ts';
import { readAll } from './read-all.ts';

const schema = z.object({
  follow: z.boolean().default(false),
  rollout: z.string().min(1).max(200).optional(),
  machine: z.string().min(1).max(200).optional(),
  tail: z.coerce.number({ message: 'must be a number' }).int().min(0).optional(),
});

/** `molt history`. */
export function runHistory(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  const o = parseFlags(schema, raw);
  return withOperator(ctx, raw, async (c) => {
    const rollout = o.rollout === undefined ? undefined : await resolveRollout(c.client, o.rollout);
    const all = await readAll(c.client, rollout);
    const mine = (e: HistoryEventView): boolean =>
      o.machine === undefined || e.machine === o.machine;
    const matching = all.filter(mine);
    const shown =
      o.tail === undefined ? matching : matching.slice(Math.max(0, matching.length - o.tail));
    if (!o.follow) {
      ctx.io.out(
        c.output === 'table' ? renderTable(historyColumns, shown) : renderData(c.output, shown),
      );
      return;
    }
    const print = printer(ctx, c.output);
    if (c.output === 'table') ctx.io.out(historyRow(undefined));
    for (const e of shown) print(e);
    const after = all.at(-1)?.seq ?? 0;
    await untilInterrupted(
      ctx,
      (signal) =>
        follow(ctx, c.client, {
          after,
          rollout,
          signal,
          print: (e) => {
            if (mine(e)) print(e);
          },
        }),
      c.abort,
    );
  });
}

function printer(ctx: CommandContext, output: OutputFormat): (e: HistoryEventView) => void {
  return (e) => {
    if (output === 'table') ctx.io.out(historyRow(e));
    else if (output === 'json') ctx.io.out(`${JSON.stringify(e)}\n`);
    else ctx.io.out(`---\n${renderData('yaml', e)}`);
  };
}

interface FollowState {
  after: number;
  readonly rollout: string | undefined;
  readonly signal: AbortSignal;
  readonly print: (e: HistoryEventView) => void;
}

/** Stream events after `s.after` until aborted; an operator away for a while is waited out. */
async function follow(ctx: CommandContext, client: OperatorClient, s: FollowState): Promise<void> {
  let away = false;
  const onEvent = (e: HistoryEventView): void => {
    if (away) ctx.io.err('reconnected\n');
    away = false;
    s.after = e.seq;
    s.print(e);
  };
  while (!s.signal.aborted) {
    try {
      const events = client.events({
        follow: true,
        after: s.after,
        ...(s.rollout !== undefined && { rollout: s.rollout }),
      });
      for await (const e of events) onEvent(e);
    } catch (e) {
      if (!isMoltError(e) || !e.retryable) throw e;
      if (!away) ctx.io.err(`lost the operator (${e.code}: ${e.message}); reconnecting…\n`);
      away = true;
    }
    await sleep(1000, undefined, { signal: s.signal });
  }
}
