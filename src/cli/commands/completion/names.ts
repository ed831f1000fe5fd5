// SPDX-License-Identifier: Apache-2.0
/**
 * `molt __complete rollouts|machines` (hidden): the names the operator of the current context
 * knows, one per line, for the completion scripts. A shell waits on it while a person types, so it
 * gives up after a short timeout and, on any failure (no context, operator away), prints nothing:
 * completion then offers what it knows statically, as kubectl's does.
 */
import type { CommandContext } from '../../context.ts';
import type { DynamicNames } from '../../completion/tree.ts';
import { withOperator } from '../rollout/run.ts';

/** How long a completion may wait for the operator. */
const CompletionTimeoutMs = 2_000;

export async function runCompleteNames(ctx: CommandContext, kind: DynamicNames): Promise<void> {
  const raw = { timeout: String(CompletionTimeoutMs), output: 'table' };
  await withOperator(ctx, raw, async ({ client }) => {
    const names =
      kind === 'rollouts'
        ? (await client.rollouts()).map((r) => r.id)
        : (await client.machines()).map((m) => m.id);
    ctx.io.out(names.map((n) => `${n}\n`).join(''));
  }).catch(() => undefined);
}
