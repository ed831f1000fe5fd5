// SPDX-License-Identifier: Apache-2.0
/** The actions of `molt cluster kubernetes …`: parse flags, call the operator, print. */
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { KubeVersion } from '../../../protocol/agent-kubernetes.ts';
import type { KubePlanAnswer, KubePlanView, OperatorClient } from '../../../protocol/index.ts';
import type { CommandContext } from '../../context.ts';
import { parseFlags } from '../../flags.ts';
import { ExitCode } from '../../io.ts';
import { renderData, type OutputFormat } from '../../output.ts';
import { withOperator } from '../rollout/run.ts';
import { describeAnswer, describeStatus, planLine } from './render.ts';

const cluster = z.string().min(1, 'is empty').max(200);
const base = z.object({
  cluster,
  dryRun: z.boolean().default(false),
  follow: z.boolean().default(false),
});

/** How often `--follow` looks at the plan. */
const followEveryMs = 1_000;

/** Print the steps whose state changed since `seen` (table output only). */
function printChanges(ctx: CommandContext, plan: KubePlanView, seen: Map<string, string>): void {
  for (const s of [...plan.steps, ...plan.rollback]) {
    if (seen.get(s.id) === s.state) continue;
    seen.set(s.id, s.state);
    if (s.state !== 'pending')
      ctx.io.out(`${s.id}: ${s.state}${s.error === undefined ? '' : ` (${s.error})`}\n`);
  }
}

const moving = (p: KubePlanView): boolean => p.phase === 'Running' || p.phase === 'RollingBack';

/** Print each step's state as it changes until the plan ends; exit 1 unless it succeeded. */
async function follow(
  ctx: CommandContext,
  client: OperatorClient,
  start: KubePlanView,
  output: OutputFormat,
): Promise<void> {
  const seen = new Map<string, string>();
  let plan = start;
  for (;;) {
    if (output === 'table') printChanges(ctx, plan, seen);
    if (!moving(plan)) break;
    await sleep(followEveryMs);
    const latest = (await client.kubernetes(plan.cluster)).plan;
    if (latest?.id !== plan.id) break;
    plan = latest;
  }
  ctx.io.out(output === 'table' ? planLine(plan) : renderData(output, plan));
  if (plan.phase !== 'Succeeded') ctx.setExitCode(ExitCode.Error);
}

function answer(
  ctx: CommandContext,
  raw: Record<string, unknown>,
  call: (client: OperatorClient, cluster: string, dryRun: boolean) => Promise<KubePlanAnswer>,
): Promise<void> {
  const o = parseFlags(base, raw);
  return withOperator(ctx, raw, async (c) => {
    const a = await call(c.client, o.cluster, o.dryRun);
    ctx.io.out(c.output === 'table' ? describeAnswer(a) : renderData(c.output, a));
    if (o.follow && a.changed) await follow(ctx, c.client, a.plan, c.output);
  });
}

/** `molt cluster kubernetes upgrade --to vX.Y.Z [--dry-run] [--follow]`. */
export function runUpgrade(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  const { to } = parseFlags(z.object({ to: KubeVersion }), raw);
  return answer(ctx, raw, (client, name, dryRun) =>
    client.kubernetesUpgrade(name, { version: to, dryRun }),
  );
}

/** `molt cluster kubernetes finalize [--dry-run] [--follow]`. */
export function runFinalize(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  return answer(ctx, raw, (client, name, dryRun) => client.kubernetesFinalize(name, { dryRun }));
}

/** `molt cluster kubernetes rollback [--reason] [--dry-run] [--follow]`. */
export function runRollback(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  const { reason } = parseFlags(z.object({ reason: z.string().min(1).max(500).optional() }), raw);
  return answer(ctx, raw, (client, name, dryRun) =>
    client.kubernetesRollback(name, { dryRun, ...(reason !== undefined && { reason }) }),
  );
}

/** `molt cluster kubernetes status`. */
export function runStatus(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  const o = parseFlags(z.object({ cluster }), raw);
  return withOperator(ctx, raw, async (c) => {
    const s = await c.client.kubernetes(o.cluster);
    ctx.io.out(c.output === 'table' ? describeStatus(s) : renderData(c.output, s));
  });
}
