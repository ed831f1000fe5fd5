// SPDX-License-Identifier: Apache-2.0
/**
 * `molt releases block|unblock|blocked` (issue 16): releases the operator must not offer to a
 * pool, or to any pool. These talk to the operator (mutual TLS), not the registry.
 */
import { z } from 'zod';
import {
  blockColumns,
  blockWideColumns,
  type BlockView,
  type RolloutSummaryView,
} from '../../../protocol/index.ts';
import type { CommandContext } from '../../context.ts';
import { parseFlags } from '../../flags.ts';
import { renderData, renderTable, type OutputFormat } from '../../output.ts';
import { withOperator } from '../rollout/run.ts';

const release = z.string().trim().min(1, 'name a release by digest or version').max(200);
const pool = z.string().min(1).max(200).optional();

const scope = (b: BlockView): string => (b.pool === undefined ? 'every pool' : `pool ${b.pool}`);

function print(ctx: CommandContext, output: OutputFormat, verb: string, list: BlockView[]): void {
  if (output !== 'table') {
    ctx.io.out(renderData(output, list));
    return;
  }
  for (const b of list)
    ctx.io.out(
      verb === 'blocked'
        ? `release ${b.version ?? b.digest} blocked for ${scope(b)}: ${b.reason}\n`
        : `release ${b.version ?? b.digest} unblocked for ${scope(b)} (it was blocked by ${b.by}: ${b.reason})\n`,
    );
}

/**
 * The paused rollouts of a release whose block was just lifted: the block paused them, and lifting
 * it does not resume them (a person decides that), so say how.
 */
function stillPaused(
  lifted: readonly BlockView[],
  rollouts: readonly RolloutSummaryView[],
): string {
  const paused = rollouts.filter(
    (r) =>
      r.state === 'Paused' &&
      lifted.some(
        (b) =>
          (b.digest === r.target.digest || b.version === r.target.version) &&
          (b.pool === undefined || b.pool === r.pool),
      ),
  );
  return paused
    .map(
      (r) =>
        `rollout ${r.id} stays Paused: resume it with \`molt rollout resume ${r.id} --reason …\`\n`,
    )
    .join('');
}

/** `molt releases block RELEASE --reason R [--pool P]`. */
export function runBlock(
  ctx: CommandContext,
  ref: string,
  raw: Record<string, unknown>,
): Promise<void> {
  const o = parseFlags(
    z.object({
      release,
      pool,
      reason: z.string({ message: 'is required: say why' }).trim().min(1, 'is empty').max(500),
    }),
    { ...raw, release: ref },
  );
  return withOperator(ctx, raw, async ({ client, output }) => {
    const r = await client.block({
      release: o.release,
      reason: o.reason,
      ...(o.pool !== undefined && { pool: o.pool }),
    });
    print(ctx, output, 'blocked', r.blocks);
  });
}

/** `molt releases unblock RELEASE [--pool P]`: without a pool, every block of the release. */
export function runUnblock(
  ctx: CommandContext,
  ref: string,
  raw: Record<string, unknown>,
): Promise<void> {
  const o = parseFlags(z.object({ release, pool }), { ...raw, release: ref });
  return withOperator(ctx, raw, async ({ client, output }) => {
    const r = await client.unblock({
      release: o.release,
      ...(o.pool !== undefined && { pool: o.pool }),
    });
    print(ctx, output, 'unblocked', r.blocks);
    if (output === 'table') ctx.io.out(stillPaused(r.blocks, await client.rollouts()));
  });
}

/** `molt releases blocked`. */
export function runBlocked(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  return withOperator(ctx, raw, async ({ client, output, wide }) => {
    const list = await client.blocks();
    const columns = wide ? blockWideColumns : blockColumns;
    if (output === 'table' && list.length === 0) ctx.io.out('no release is blocked\n');
    else ctx.io.out(output === 'table' ? renderTable(columns, list) : renderData(output, list));
  });
}
