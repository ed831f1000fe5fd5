// SPDX-License-Identifier: Apache-2.0
/** The actions of `molt machine …`: parse flags, call the operator, print. */
import { z } from 'zod';
import { ErrorCode, MoltError, machineColumns, type MachineView } from '../../../protocol/index.ts';
import type { CommandContext } from '../../main.ts';
import { renderData, renderTable, type OutputFormat } from '../../output.ts';
import { parseFlags } from '../registry-flags.ts';
import { withOperator } from '../rollout/run.ts';

const idSchema = z.string({ message: 'is required' }).min(1, 'is empty').max(200);

function printMachine(ctx: CommandContext, output: OutputFormat, m: MachineView): void {
  if (output !== 'table') {
    ctx.io.out(renderData(output, m));
    return;
  }
  ctx.io.out(
    m.hold === undefined
      ? `machine ${m.id}: not held\n`
      : `machine ${m.id}: held until ${m.hold.until} by ${m.hold.by ?? 'unknown'}: ${m.hold.reason}\n`,
  );
}

/** `molt machine list`. */
export function runList(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  return withOperator(ctx, raw, async ({ client, output }) => {
    const list = await client.machines();
    ctx.io.out(output === 'table' ? renderTable(machineColumns, list) : renderData(output, list));
  });
}

const holdSchema = z.object({
  id: idSchema,
  reason: z.string({ message: 'is required: say why' }).trim().min(1, 'is empty').max(500),
  for: z.string().min(1).optional(),
  until: z.string().min(1).optional(),
});

/** `molt machine hold ID --reason R (--for 2h | --until ISO)`; the operator checks the values. */
export function runHold(
  ctx: CommandContext,
  id: string,
  raw: Record<string, unknown>,
): Promise<void> {
  const o = parseFlags(holdSchema, { ...raw, id });
  if ((o.for === undefined) === (o.until === undefined))
    throw new MoltError(ErrorCode.BadFlag, 'give exactly one of --for and --until', {
      hint: 'e.g. --for 2h, or --until 2026-11-25T06:00:00Z',
    });
  return withOperator(ctx, raw, async ({ client, output }) => {
    const m = await client.hold(o.id, {
      reason: o.reason,
      ...(o.for !== undefined && { for: o.for }),
      ...(o.until !== undefined && { until: o.until }),
    });
    printMachine(ctx, output, m);
  });
}

/** `molt machine release ID`. */
export function runRelease(
  ctx: CommandContext,
  id: string,
  raw: Record<string, unknown>,
): Promise<void> {
  const o = parseFlags(z.object({ id: idSchema }), { id });
  return withOperator(ctx, raw, async ({ client, output }) => {
    printMachine(ctx, output, await client.release(o.id));
  });
}
