// SPDX-License-Identifier: Apache-2.0
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { plan, simulate } from '../../../core/rollout/index.ts';
import { ErrorCode, MoltError } from '../../../protocol/index.ts';
import { parseDuration, parseTime } from '../../../core/time.ts';
import { parseFleet } from '../../../protocol/fleet.ts';
import { withFleetState } from '../../../protocol/fleet-state.ts';
import type { CommandContext } from '../../context.ts';
import { outputFormats, renderData } from '../../output.ts';
import { parseFlags } from '../../flags.ts';
import { describePlan, toPlanView } from './view.ts';
import { runLivePlan } from './live.ts';

const planSchema = z.object({
  fleet: z.string().min(1, 'is empty'),
  state: z.string().min(1, 'is empty').optional(),
  at: z
    .string()
    .refine((s) => parseTime(s) !== undefined, 'must be an ISO 8601 time with a zone (…T10:00:00Z)')
    .transform((s) => parseTime(s) ?? 0)
    .optional(),
  upgradeMinutes: z.coerce
    .number({ message: 'must be a number of minutes' })
    .positive('must be more than 0')
    .max(7 * 24 * 60, 'must be at most a week')
    .default(10),
  horizon: z
    .string()
    .default('7d')
    .refine((s) => (parseDuration(s) ?? 0) > 0, 'must be a duration like 12h or 7d')
    .transform((s) => parseDuration(s) ?? 0),
  output: z.enum(outputFormats).default('table'),
});

/** Bound on the plans one prediction evaluates (each distinct start instant is one). */
const maxSteps = 10_000;

/** `molt plan`: the live operator's plan, or (`--fleet`) the fleet file's with a prediction. */
export async function runPlan(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  if (raw['fleet'] === undefined) {
    const offline = ['at', 'upgradeMinutes', 'horizon', 'state'].filter(
      (k) => raw[k] !== undefined,
    );
    if (offline.length > 0)
      throw new MoltError(
        ErrorCode.BadFlag,
        `${offline.map((k) => `--${k === 'upgradeMinutes' ? 'upgrade-minutes' : k}`).join(', ')} ${offline.length === 1 ? 'needs' : 'need'} --fleet (a prediction of the fleet file's plan)`,
        { hint: 'the live operator plans now, on what it observes; --fleet FILE plans offline' },
      );
    await runLivePlan(ctx, raw);
    return;
  }
  await runFleetPlan(ctx, raw);
}

/** `molt plan --fleet FILE`: parse and check the fleet, plan at `--at`, simulate forward, print both. */
async function runFleetPlan(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  const o = parseFlags(planSchema, raw);
  const now = o.at ?? Date.now();
  const fleet = parseFleet(await readFleet(o.fleet), { source: o.fleet });
  const snapshot =
    o.state === undefined
      ? fleet
      : withFleetState(fleet, await readFleet(o.state, '--state'), o.state);
  const upgradeMs = Math.round(o.upgradeMinutes * 60_000);
  const schedule = simulate(snapshot, now, { upgradeMs, horizonMs: o.horizon, maxSteps });
  if (schedule.steps >= maxSteps) {
    // Machines past this point are listed as waiting, but the horizon did not end their turn.
    ctx.io.err(`warning: the prediction stopped after ${maxSteps} steps, before the horizon\n`);
  }
  const view = toPlanView({
    fleet: o.fleet,
    snapshot,
    plan: plan(snapshot, now),
    schedule,
    upgradeMs,
    horizonMs: o.horizon,
  });
  ctx.io.out(o.output === 'table' ? describePlan(view) : renderData(o.output, view));
}

async function readFleet(path: string, flag = '--fleet'): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    const why = (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : String(e);
    throw new MoltError(ErrorCode.BadFlag, `${flag} ${path}: ${why}`, {
      cause: e,
      hint: `give the path of a ${flag === '--fleet' ? 'fleet' : 'fleet state'} file (YAML or JSON)`,
    });
  }
}
