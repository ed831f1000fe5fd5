// SPDX-License-Identifier: Apache-2.0
/** The actions of `molt node …`: parse flags, call the agent, print. */
import { z } from 'zod';
import {
  ErrorCode,
  MoltError,
  isMoltError,
  operationColumns,
  type AgentClient,
  type AgentEvent,
  type OperationAccepted,
} from '../../../protocol/index.ts';
import { ExitCode } from '../../io.ts';
import type { CommandContext } from '../../context.ts';
import { renderData, renderTable, type OutputFormat } from '../../output.ts';
import { parseFlags } from '../../flags.ts';
import { withAgent } from './connection.ts';
import { followOperation } from './follow.ts';
import { createEventPrinter, describeStatus } from './render.ts';

export { runHold, runRelease } from './hold.ts';
export { runServiceAction, runServiceList, runServiceLogs } from './service.ts';
export {
  runEtcdForfeit,
  runEtcdMembers,
  runEtcdRejoin,
  runEtcdRemove,
  runEtcdSnapshot,
} from './etcd.ts';
import { RequestDefaults } from '../../../core/upgrade/events.ts';

/** `molt node status`. */
export function runStatus(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  return withAgent(ctx, raw, async ({ client, output }) => {
    const status = await client.status();
    ctx.io.out(output === 'table' ? describeStatus(status) : renderData(output, status));
  });
}

/** `molt node operations`. */
export function runOperations(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  return withAgent(ctx, raw, async ({ client, output }) => {
    const ops = await client.operations();
    ctx.io.out(output === 'table' ? renderTable(operationColumns, ops) : renderData(output, ops));
  });
}

/** `molt node cancel`: stop the running pull or drop the staged upgrade; the operation ends Failed MOLT_CANCELLED. */
export function runCancel(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  return withAgent(ctx, raw, async ({ client, output }) => {
    const cancelled = await client.cancel();
    ctx.io.out(
      output === 'table'
        ? `cancelling: operation ${cancelled.operationId}\n  its result: molt node events --operation ${cancelled.operationId} --follow\n`
        : renderData(output, cancelled),
    );
  });
}

const followSchema = z.object({
  follow: z.boolean().default(false),
  operation: z.string().min(1).max(200).optional(),
  reconnectTimeout: z.coerce
    .number({ message: 'must be a number of milliseconds' })
    .int()
    .min(0)
    .max(3_600_000),
});

const submitSchema = followSchema.extend({
  image: z.string().min(1, 'is empty').optional(),
  preserve: z.boolean().default(RequestDefaults.preserve),
  stage: z.boolean().default(RequestDefaults.stage),
  force: z.boolean().default(RequestDefaults.force),
});

/** `molt node upgrade|rollback|reboot`. */
export function runSubmit(
  ctx: CommandContext,
  kind: 'upgrade' | 'rollback' | 'reboot',
  raw: Record<string, unknown>,
): Promise<void> {
  const o = parseFlags(submitSchema, raw);
  if (kind === 'upgrade' && o.image === undefined) {
    throw new MoltError(ErrorCode.BadFlag, '--image is required', {
      hint: 'name the installer image: --image registry/repo:tag or @sha256:…',
    });
  }
  return withAgent(ctx, raw, async ({ client, output }) => {
    const accepted = await submit(client, kind, o).catch((e: unknown) => {
      throw explainBusy(e);
    });
    if (!o.follow) {
      ctx.io.out(
        output === 'table'
          ? `accepted: ${kind} operation ${accepted.operationId}\n  follow it: molt node events --operation ${accepted.operationId} --follow\n`
          : renderData(output, accepted),
      );
      return;
    }
    if (output === 'table') ctx.io.out(`accepted: ${kind} operation ${accepted.operationId}\n`);
    await follow(ctx, client, output, {
      ...o,
      operation: accepted.operationId,
      untilStaged: kind === 'upgrade' && o.stage,
    });
  });
}

function submit(
  client: AgentClient,
  kind: 'upgrade' | 'rollback' | 'reboot',
  o: z.output<typeof submitSchema>,
): Promise<OperationAccepted> {
  if (kind === 'upgrade')
    return client.upgrade({
      image: o.image ?? '',
      preserve: o.preserve,
      stage: o.stage,
      force: o.force,
    });
  return kind === 'rollback'
    ? client.rollback({ force: o.force })
    : client.reboot({ force: o.force });
}

/** A busy answer gets the command that follows the running operation. */
function explainBusy(e: unknown): unknown {
  if (!isMoltError(e, ErrorCode.AgentBusy) || e.hint !== undefined) return e;
  const id = e.details?.['operationId'];
  if (typeof id !== 'string') return e;
  return new MoltError(e.code, e.message, {
    details: e.details ?? {},
    hint: `wait for it: molt node events --operation ${id} --follow`,
  });
}

/** `molt node events`. */
export function runEvents(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  const o = parseFlags(followSchema, raw);
  return withAgent(ctx, raw, async ({ client, output }) => {
    if (o.follow) {
      await follow(ctx, client, output, o);
      return;
    }
    const printer = createEventPrinter(ctx.io, output);
    for await (const e of client.events(
      o.operation === undefined ? {} : { operation: o.operation },
    ))
      printer.print(e);
    printer.end();
  });
}

/** `molt node logs`. */
export function runLogs(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  const o = parseFlags(
    z.object({
      follow: z.boolean().default(false),
      tail: z.coerce.number({ message: 'must be a number' }).int().min(0).optional(),
    }),
    raw,
  );
  return withAgent(ctx, raw, async ({ client, output }) => {
    const printer = createEventPrinter(ctx.io, output);
    for await (const e of client.logs({
      follow: o.follow,
      ...(o.tail !== undefined && { tail: o.tail }),
    }))
      printer.print(e);
    printer.end();
  });
}

async function follow(
  ctx: CommandContext,
  client: AgentClient,
  output: OutputFormat,
  o: { operation?: string | undefined; reconnectTimeout: number; untilStaged?: boolean },
): Promise<void> {
  const printer = createEventPrinter(ctx.io, output);
  try {
    const result = await followOperation(client, {
      ...(o.operation !== undefined && { operation: o.operation }),
      reconnectTimeoutMs: o.reconnectTimeout,
      untilStaged: o.untilStaged === true,
      onEvent: (e) => {
        printer.print(e);
      },
      onOutage: (e) => {
        printer.end();
        ctx.io.err(`lost the agent (${e.code}: ${e.message}); reconnecting…\n`);
      },
      onReconnected: () => {
        ctx.io.err('reconnected\n');
      },
    });
    // A staged upgrade stops following at Staged: it worked, and waits for a reboot.
    if (result.kind !== 'phase' && !succeeded(result.result)) ctx.setExitCode(ExitCode.Error);
  } finally {
    printer.end();
  }
}

/** Did the operation do what was asked? A manual rollback ends `RolledBack{manual}` when it worked. */
function succeeded(result: AgentEvent['result']): boolean {
  return (
    result?.result === 'Succeeded' ||
    (result?.result === 'RolledBack' && result.reason === 'manual')
  );
}
