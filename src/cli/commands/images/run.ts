// SPDX-License-Identifier: Apache-2.0
/** The actions of `molt images …`: parse flags, call the operator, print. */
import { z } from 'zod';
import { ErrorCode, MoltError } from '../../../protocol/index.ts';
import type { CommandContext } from '../../context.ts';
import { parseFlags } from '../../flags.ts';
import { renderData } from '../../output.ts';
import { withOperator } from '../rollout/run.ts';
import { describeImages } from './render.ts';

const listFlags = z.object({ policy: z.string().min(1, 'is empty').max(200).optional() });

/** `molt images list [--policy NAME]`. */
export function runList(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  const o = parseFlags(listFlags, raw);
  return withOperator(ctx, raw, async (c) => {
    const all = await c.client.images();
    const policies = all.policies.filter((p) => o.policy === undefined || p.name === o.policy);
    if (o.policy !== undefined && policies.length === 0)
      throw new MoltError(ErrorCode.BadFlag, `--policy ${o.policy}: no such image policy`, {
        hint: `the operator follows: ${all.policies.map((p) => p.name).join(', ') || 'no image policy'}`,
      });
    const view = { ...all, policies };
    ctx.io.out(c.output === 'table' ? describeImages(view) : renderData(c.output, view));
  });
}
