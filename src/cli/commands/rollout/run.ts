// SPDX-License-Identifier: Apache-2.0
/** The actions of `molt rollout …`: parse flags, call the operator, print. */
import { shownAt } from '../../../protocol/operator-columns.ts';
import { z } from 'zod';
import {
  ErrorCode,
  MoltError,
  rolloutColumns,
  rolloutWideColumns,
  type OperatorClient,
  type RolloutActionResult,
  type RolloutSummaryView,
  type RolloutView,
} from '../../../protocol/index.ts';
import { ExitCode } from '../../io.ts';
import type { CommandContext } from '../../context.ts';
import { renderData, renderListData, renderTable } from '../../output.ts';
import { resolvePrefix } from '../../names.ts';
import { watch } from '../../watch.ts';
import { parseFlags } from '../../flags.ts';
import { withConnection } from '../../mtls/connect.ts';
import { connectToOperator, type OperatorConnection } from './connection.ts';
import { followRollout } from './follow.ts';
import { describeRollout, historyLine, progressLine } from './render.ts';
import { readAll } from '../history/read-all.ts';

/** Open a connection, run, close. */
export const withOperator = (
  ctx: CommandContext,
  raw: Record<string, unknown>,
  run: (c: OperatorConnection) => Promise<void>,
): Promise<void> => withConnection(connectToOperator(raw, ctx.io.env), run);

/** A rollout or machine id flag/argument (both verbs' modules). */
export const idSchema = z.string({ message: 'is required' }).min(1, 'is empty').max(200);

/** `molt rollout list [-o wide] [--watch]`. */
export function runList(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  return withOperator(ctx, raw, async (c) => {
    const columns = c.wide ? rolloutWideColumns : rolloutColumns;
    const render = (list: RolloutSummaryView[]): string =>
      c.output === 'table'
        ? renderTable(columns, list)
        : renderListData(c.output, list, raw['watch'] === true);
    if (raw['watch'] === true)
      await watch(ctx, { fetch: () => c.client.rollouts(), render, stop: c.abort });
    else ctx.io.out(render(await c.client.rollouts()));
  });
}

/**
 * The rollout `id` names: itself, or the one rollout whose id starts with it (`workers-1.1`).
 * Several: MOLT_AMBIGUOUS_ID with the candidates.
 */
export async function resolveRollout(client: OperatorClient, id: string): Promise<string> {
  return resolvePrefix(
    id,
    (await client.rollouts()).map((r) => r.id),
  );
}

const statusSchema = z.object({
  id: idSchema,
  follow: z.boolean().default(false),
  reconnectTimeout: z.coerce
    .number({ message: 'must be a number of milliseconds' })
    .int()
    .min(0)
    .max(3_600_000),
});

/** `molt rollout status ID [--follow]`; following ends with exit 1 when the rollout halts. */
export function runStatus(
  ctx: CommandContext,
  id: string,
  raw: Record<string, unknown>,
): Promise<void> {
  const o = parseFlags(statusSchema, { ...raw, id });
  return withOperator(ctx, raw, async ({ client, output }) => {
    const id = await resolveRollout(client, o.id);
    if (!o.follow) {
      const r = await client.rollout(id);
      ctx.io.out(
        output === 'table'
          ? describeRollout(r, await whyWaiting(client, r))
          : renderData(output, r),
      );
      return;
    }
    const data = (v: unknown): void => {
      ctx.io.out(
        output === 'json' ? `${JSON.stringify(v)}\n` : renderData('yaml', v).replace(/^/, '---\n'),
      );
    };
    let started = false;
    const final = await followRollout(client, id, {
      reconnectTimeoutMs: o.reconnectTimeout,
      onEvent: (e) => {
        if (output === 'table') ctx.io.out(historyLine(e));
        else data(e);
      },
      onProgress: (r: RolloutView) => {
        if (output !== 'table') return;
        if (!started)
          ctx.io.out(`rollout ${r.id}: pool ${r.pool} to ${r.target.version} (${r.state})\n`);
        started = true;
        ctx.io.out(`progress: ${progressLine(r)} — ${r.state}\n`);
      },
      onOutage: (e) => {
        ctx.io.err(`lost the operator (${e.code}: ${e.message}); reconnecting…\n`);
      },
    });
    if (output !== 'table') data(final);
    if (final.state !== 'Completed') ctx.setExitCode(ExitCode.Error);
  });
}

/** What `molt rollout rollback ID` would do, printed before it asks for `--yes`. */
function rollbackPreview(r: RolloutView): string {
  const back = r.from === undefined ? 'the release it ran before' : r.from.version;
  const moved = r.machines.filter((m) => m.phase === 'Succeeded').map((m) => m.machine);
  const which = moved.length === 0 ? 'none yet' : moved.join(', ');
  return (
    `rollout ${r.id} (pool ${r.pool}, ${r.state}) would be reversed: a new rollout ${r.id}-rollback takes pool ${r.pool} back to ${back}, under the pool's policies\n` +
    `  machines it moved to ${r.target.version}: ${which}\n` +
    (r.images === undefined
      ? `  then: ${r.id} ends RolledBack, and ${r.target.version} is blocked for pool ${r.pool} until \`molt releases unblock ${r.target.version} --pool ${r.pool}\`\n`
      : '')
  );
}

/**
 * Why a rollout that starts nothing is so: a paused or halted one by the history's last word on
 * it (who paused it and why, or which machine halted it), one awaiting approval by what to run.
 */
async function whyWaiting(client: OperatorClient, r: RolloutView): Promise<string | undefined> {
  if (r.state === 'AwaitingApproval') return `awaits approval: molt rollout approve ${r.id}`;
  if (r.state !== 'Paused' && r.state !== 'Halted') return undefined;
  if (r.stateReason !== undefined) return r.stateReason;
  // A rollout paused by an operator older than `stateReason`: the history's last word on it.
  const events = await readAll(client, r.id);
  const last = events.findLast((e) => e.kind === 'rollout-state' && e.data?.['state'] === r.state);
  return last === undefined ? undefined : `${last.message} (${shownAt(last.at, Date.now())})`;
}

/** What a rollback started, and what became of the rollout it reverses and its release. */
function rolledBackLines({ rollout: r, changed }: RolloutActionResult): string {
  const started = `rollout ${r.id}: ${changed ? 'started' : 'already exists'}, back to ${r.target.version}\n  follow it: molt rollout status ${r.id} --follow\n`;
  const gone = r.from;
  if (r.rollbackOf === undefined || gone === undefined || r.images !== undefined) return started;
  return `${started}rollout ${r.rollbackOf} is RolledBack; release ${gone.version} is blocked for pool ${r.pool} (offer it again: molt releases unblock ${gone.version} --pool ${r.pool})\n`;
}

/** `molt rollout pause|resume|approve|cancel|rollback ID`. */
export function runAction(
  ctx: CommandContext,
  action: 'pause' | 'resume' | 'approve' | 'cancel' | 'rollback',
  id: string,
  raw: Record<string, unknown>,
): Promise<void> {
  const o = parseFlags(
    z.object({
      id: idSchema,
      reason: z.string().min(1).max(500).optional(),
      force: z.boolean().default(false),
      yes: z.boolean().default(false),
    }),
    { ...raw, id },
  );
  return withOperator(ctx, raw, async ({ client, output }) => {
    const reason = o.reason === undefined ? {} : { reason: o.reason };
    const id = await resolveRollout(client, o.id);
    if (action === 'rollback' && !o.yes) {
      ctx.io.out(rollbackPreview(await client.rollout(id)));
      throw new MoltError(ErrorCode.BadFlag, `not rolled back: ${id} needs --yes`, {
        hint: `molt rollout rollback ${id} --yes --reason …`,
      });
    }
    const call: Readonly<Record<typeof action, () => Promise<RolloutActionResult>>> = {
      pause: () => client.pause(id, reason),
      resume: () => client.resume(id, { ...reason, ...(o.force && { force: true }) }),
      approve: () => client.approve(id, reason),
      cancel: () => client.cancel(id, reason),
      rollback: () => client.rollback(id, reason),
    };
    const result = await call[action]();
    const r = result.rollout;
    const line =
      action === 'rollback'
        ? rolledBackLines(result)
        : `rollout ${r.id}: ${result.changed ? 'now' : 'already'} ${r.state}\n`;
    ctx.io.out(output === 'table' ? line : renderData(output, result));
  });
}
