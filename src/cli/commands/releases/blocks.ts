// SPDX-License-Identifier: Apache-2.0
/**
 * `molt releases block|unblock|blocked`: releases the operator must not offer to a
 * pool, or to any pool. These talk to the operator (mutual TLS), not the registry.
 */
import { z } from 'zod';
import {
  isEnded,
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
 * What lifting blocks does to the rollouts of their releases, which a person may need to act on:
 * a paused one stays paused (the block paused it; a person decides to resume it), and a rolled
 * back release is offered again — discovery starts a new rollout to it on its next pass.
 */
function afterUnblock(
  lifted: readonly BlockView[],
  rollouts: readonly RolloutSummaryView[],
): string {
  const of = (r: RolloutSummaryView): boolean =>
    lifted.some(
      (b) =>
        (b.digest === r.target.digest || b.version === r.target.version) &&
        (b.pool === undefined || b.pool === r.pool),
    );
  const paused = rollouts.filter((r) => r.state === 'Paused' && of(r));
  const open = new Set(rollouts.filter((r) => !isEnded(r.state)).map((r) => r.pool));
  const oldestFirst = rollouts.filter(of).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  const newest = new Map(oldestFirst.map((r) => [`${r.pool}\0${r.target.digest}`, r]));
  const again = [...newest.values()].filter((r) => r.state === 'RolledBack');
  return [
    ...paused.map(
      (r) =>
        `rollout ${r.id} stays Paused: resume it with \`molt rollout resume ${r.id} --reason …\`\n`,
    ),
    ...again.map(
      (r) =>
        `pool ${r.pool} is offered ${r.target.version} again (rollout ${r.id} was rolled back): discovery starts a new rollout${open.has(r.pool) ? ' once the pool’s running rollout ends' : ' on its next pass'}; \`molt plan\` shows it\n`,
    ),
  ].join('');
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
    if (output === 'table') ctx.io.out(afterUnblock(r.blocks, await client.rollouts()));
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
