// SPDX-License-Identifier: Apache-2.0
/**
 * `molt node hold|release`: the machine's hold, set or cleared on its agent directly
 * (docs/adr/0004 §11). A hold set here is the person's own: the operator never replaces or clears
 * it (it does the ones it pushed for `molt machine hold`), and its planner waits for it too.
 */
import { z } from 'zod';
import { ErrorCode, MoltError, type HoldAnswer } from '../../../protocol/index.ts';
import type { CommandContext } from '../../context.ts';
import { holdForFlag, holdUntilFlag, parseFlags } from '../../flags.ts';
import { renderData, type OutputFormat } from '../../output.ts';
import { withAgent } from './connection.ts';
import { holdLine } from './render.ts';

function print(ctx: CommandContext, output: OutputFormat, answer: HoldAnswer): void {
  ctx.io.out(
    output === 'table'
      ? `hold: ${holdLine(answer.hold, Date.now())}\n`
      : renderData(output, answer),
  );
}

const holdSchema = z.object({
  reason: z.string({ message: 'is required: say why' }).trim().min(1, 'is empty').max(500),
  for: holdForFlag.optional(),
  until: holdUntilFlag.optional(),
});

/** `molt node hold --reason R (--for 2h | --until ISO)`; the agent checks the values. */
export function runHold(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  const o = parseFlags(holdSchema, raw);
  if ((o.for === undefined) === (o.until === undefined))
    throw new MoltError(ErrorCode.BadFlag, 'give exactly one of --for and --until', {
      hint: 'e.g. --for 2h, or --until 2026-11-25T06:00:00Z',
    });
  return withAgent(ctx, raw, async ({ client, output }) => {
    const answer = await client.setHold({
      reason: o.reason,
      ...(o.for !== undefined && { for: o.for }),
      ...(o.until !== undefined && { until: o.until }),
    });
    print(ctx, output, answer);
  });
}

/** `molt node release`: clear the machine's hold (not held: not an error, and said so). */
export function runRelease(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  return withAgent(ctx, raw, async ({ client, output }) => {
    const answer = await client.clearHold();
    const { released } = answer;
    // `released` absent: an agent that does not say what it lifted; show the hold as before.
    if (output !== 'table' || released === undefined) print(ctx, output, answer);
    else if (released === null) ctx.io.out('hold: none; there was none to release\n');
    else ctx.io.out(`hold: none; released the hold ${holdLine(released, Date.now())}\n`);
  });
}
