// SPDX-License-Identifier: Apache-2.0
/** The actions of `molt machine …`: parse flags, call the operator, print. */
import { shownAt } from '../../../protocol/operator-columns.ts';
import { z } from 'zod';
import {
  ErrorCode,
  MoltError,
  machineColumns,
  machineWideColumns,
  type MachineView,
} from '../../../protocol/index.ts';
import type { CommandContext } from '../../context.ts';
import { renderData, renderListData, renderTable, type OutputFormat } from '../../output.ts';
import { parseLabelSelector } from '../../label-selector.ts';
import { filterMachines, whyNone } from './filter.ts';
import { watch } from '../../watch.ts';
import { holdForFlag, holdUntilFlag, parseFlags } from '../../flags.ts';
import { idSchema, withOperator } from '../rollout/run.ts';
import { heldUntil } from '../../../core/quoted-reasons.ts';

function printMachine(ctx: CommandContext, output: OutputFormat, m: MachineView): void {
  if (output !== 'table') {
    ctx.io.out(renderData(output, m));
    return;
  }
  ctx.io.out(
    m.hold === undefined
      ? `machine ${m.id}: not held\n`
      : `machine ${m.id}: ${heldUntil(shownAt(m.hold.until, Date.now()), m.hold.reason, m.hold.by ?? 'unknown')}\n`,
  );
}

/** `molt machine list [--pool P] [--role R] [-l SELECTOR] [-o wide] [--watch]`. */
export function runList(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  const o = parseFlags(
    z.object({
      selector: z.string().optional(),
      pool: z.string().min(1).optional(),
      role: z.enum(['control-plane', 'worker']).optional(),
      watch: z.boolean().default(false),
    }),
    raw,
  );
  const filter = {
    pool: o.pool,
    role: o.role,
    selector: o.selector === undefined ? [] : parseLabelSelector(o.selector),
  };
  return withOperator(ctx, raw, async (c) => {
    const columns = c.wide ? machineWideColumns : machineColumns;
    const render = (list: MachineView[]): string =>
      c.output === 'table' ? renderTable(columns, list) : renderListData(c.output, list, o.watch);
    if (o.watch) {
      const fetch = async () => filterMachines(await c.client.machines(), filter);
      await watch(ctx, { fetch, render, stop: c.abort });
      return;
    }
    const all = await c.client.machines();
    const kept = filterMachines(all, filter);
    ctx.io.out(render(kept));
    const why = whyNone(all, filter, kept.length);
    if (why !== undefined) ctx.io.err(`${why}\n`);
  });
}

const holdSchema = z.object({
  id: idSchema,
  reason: z.string({ message: 'is required: say why' }).trim().min(1, 'is empty').max(500),
  for: holdForFlag.optional(),
  until: holdUntilFlag.optional(),
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
    const r = await client.release(o.id);
    const { released } = r;
    // `released` absent: an operator that does not say what it lifted; show the machine as before.
    if (output !== 'table' || released === undefined) printMachine(ctx, output, r);
    else if (released === null) ctx.io.out(`machine ${r.id}: was not held; nothing to release\n`);
    else
      ctx.io.out(
        `machine ${r.id}: released the hold by ${released.by ?? 'unknown'} (until ${shownAt(released.until, Date.now())}): ${released.reason}\n`,
      );
  });
}

/** `--label k=v`, repeatable, into a record (a bad one is MOLT_BAD_FLAG naming it). */
function labelsOf(raw: unknown): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const item of Array.isArray(raw) ? (raw as unknown[]) : []) {
    const text = String(item);
    const at = text.indexOf('=');
    if (at <= 0)
      throw new MoltError(ErrorCode.BadFlag, `--label ${text}: must be key=value`, {
        hint: 'for example --label zone=a',
      });
    labels[text.slice(0, at)] = text.slice(at + 1);
  }
  return labels;
}

/** `molt machine register ID --agent URL --pool P [--role R] [--cluster C] [--label k=v]…`. */
export function runRegister(
  ctx: CommandContext,
  id: string,
  raw: Record<string, unknown>,
): Promise<void> {
  const o = parseFlags(
    z.object({
      id: idSchema,
      agent: z.string({ message: 'is required' }).min(1),
      pool: z.string({ message: 'is required' }).min(1),
      role: z.enum(['control-plane', 'worker']).default('worker'),
      cluster: z.string().min(1).optional(),
    }),
    { ...raw, id },
  );
  const labels = labelsOf(raw['label']);
  return withOperator(ctx, raw, async ({ client, output }) => {
    const m = await client.register({
      id: o.id,
      endpoint: o.agent,
      pool: o.pool,
      role: o.role,
      ...(o.cluster !== undefined && { cluster: o.cluster }),
      labels,
    });
    ctx.io.out(
      output === 'table'
        ? `machine ${m.id}: registered in pool ${m.pool} at ${m.endpoint}\n`
        : renderData(output, m),
    );
  });
}

/** `molt machine deregister ID`. */
export function runDeregister(
  ctx: CommandContext,
  id: string,
  raw: Record<string, unknown>,
): Promise<void> {
  const o = parseFlags(z.object({ id: idSchema }), { id });
  return withOperator(ctx, raw, async ({ client, output }) => {
    const r = await client.deregister(o.id);
    ctx.io.out(
      output === 'table'
        ? `machine ${r.id}: ${r.removed ? 'deregistered' : 'was not registered'}\n`
        : renderData(output, r),
    );
  });
}
