// SPDX-License-Identifier: Apache-2.0
/**
 * `molt images status|rollback|approve` (docs/adr/0013 decision 8): image rollouts are rollouts on
 * the operator (`GET /v1/rollouts`, the same actions and the same role checks), told apart by
 * their `images` record. A machine rollout named here is refused, naming `molt rollout …`.
 */
import { z } from 'zod';
import {
  ErrorCode,
  MoltError,
  isMoltError,
  type OperatorClient,
  type RolloutSummaryView,
} from '../../../protocol/index.ts';
import type { CommandContext } from '../../context.ts';
import { parseFlags } from '../../flags.ts';
import { resolvePrefix } from '../../names.ts';
import { renderData } from '../../output.ts';
import { idSchema, withOperator } from '../rollout/run.ts';
import {
  describeImageRollout,
  describeImageRollouts,
  describeRollbackPreview,
} from './status-render.ts';

const policySchema = z.string().min(1, 'is empty').max(200).optional();

/**
 * The image rollout `id` names (itself or a unique prefix), of `policy` when given. A machine
 * rollout is MOLT_BAD_INPUT naming `molt rollout <verb>`; none at all MOLT_ROLLOUT_NOT_FOUND.
 */
export async function resolveImageRollout(
  client: OperatorClient,
  id: string,
  verb: string,
  policy?: string,
): Promise<string> {
  const all = await client.rollouts();
  const images = all.filter(
    (r) => r.images !== undefined && (policy === undefined || r.images.policy === policy),
  );
  try {
    return resolvePrefix(
      id,
      images.map((r) => r.id),
    );
  } catch (e) {
    if (!isMoltError(e) || e.code !== ErrorCode.RolloutNotFound) throw e;
    const machine = all.find((r) => r.images === undefined && r.id === id);
    const only = all.filter((r) => r.images === undefined && r.id.startsWith(id));
    const named = machine ?? (only.length === 1 ? only[0] : undefined);
    if (named === undefined) throw e;
    throw new MoltError(
      ErrorCode.BadInput,
      `rollout ${named.id} is a machine rollout (pool ${named.pool}), not an image rollout`,
      { hint: `use \`molt rollout ${verb} ${named.id}\`` },
    );
  }
}

const statusFlags = z.object({ id: idSchema.optional(), policy: policySchema });

/** `molt images status [ROLLOUT] [--policy NAME] [-o json|yaml|wide]`. */
export function runStatus(
  ctx: CommandContext,
  id: string | undefined,
  raw: Record<string, unknown>,
): Promise<void> {
  const o = parseFlags(statusFlags, { ...raw, id });
  return withOperator(ctx, raw, async ({ client, output, wide }) => {
    if (o.id !== undefined) {
      const r = await client.rollout(await resolveImageRollout(client, o.id, 'status', o.policy));
      ctx.io.out(output === 'table' ? describeImageRollout(r, wide) : renderData(output, r));
      return;
    }
    const list: RolloutSummaryView[] = (await client.rollouts()).filter(
      (r) => r.images !== undefined && (o.policy === undefined || r.images.policy === o.policy),
    );
    ctx.io.out(
      output === 'table'
        ? describeImageRollouts(list, Date.now(), wide)
        : renderData(output, list.toReversed()),
    );
  });
}

const rollbackFlags = z.object({
  id: idSchema,
  yes: z.boolean().default(false),
  reason: z.string().min(1, 'is empty').max(500).optional(),
});

/**
 * `molt images rollback ROLLOUT [--yes] [--reason TEXT]`: without `--yes`, what it would put back
 * and a refusal; with it, `POST /v1/rollouts/:id/rollback`.
 */
export function runRollback(
  ctx: CommandContext,
  id: string,
  raw: Record<string, unknown>,
): Promise<void> {
  const o = parseFlags(rollbackFlags, { ...raw, id });
  return withOperator(ctx, raw, async ({ client, output }) => {
    const resolved = await resolveImageRollout(client, o.id, 'rollback');
    if (!o.yes) {
      ctx.io.out(describeRollbackPreview(await client.rollout(resolved)));
      throw new MoltError(ErrorCode.BadFlag, `not rolled back: ${resolved} needs --yes`, {
        hint: `molt images rollback ${resolved} --yes`,
      });
    }
    const result = await client.rollback(
      resolved,
      o.reason === undefined ? {} : { reason: o.reason },
    );
    const r = result.rollout;
    ctx.io.out(
      output === 'table'
        ? `rollout ${r.id}: ${result.changed ? 'started' : 'already exists'}, back to ${r.target.version}@${r.target.digest}\n  follow it: molt images status ${r.id}\n`
        : renderData(output, result),
    );
  });
}

/** `molt images approve ROLLOUT`: `POST /v1/rollouts/:id/approve`. */
export function runApprove(
  ctx: CommandContext,
  id: string,
  raw: Record<string, unknown>,
): Promise<void> {
  const o = parseFlags(z.object({ id: idSchema }), { id });
  return withOperator(ctx, raw, async ({ client, output }) => {
    const result = await client.approve(await resolveImageRollout(client, o.id, 'approve'));
    const r = result.rollout;
    ctx.io.out(
      output === 'table'
        ? `rollout ${r.id}: ${result.changed ? 'now' : 'already'} ${r.state}\n`
        : renderData(output, result),
    );
  });
}
