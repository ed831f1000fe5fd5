// SPDX-License-Identifier: Apache-2.0
/**
 * A pool's rules as sentences for people (the dashboard's pools view): each policy, and what the
 * pool follows. Pure; the words match the fleet file's fields so a reader finds them there.
 */
import { formatDuration } from '../time.ts';
import type { Limit, Policy, Pool, Window } from './types.ts';

const plural = (n: number, word: string): string => `${String(n)} ${word}${n === 1 ? '' : 's'}`;

const limitText = (l: Limit): string =>
  'count' in l ? plural(l.count, 'machine') : `${String(l.percent)}%`;

const windowText = (w: Window): string =>
  `${w.cron} for ${formatDuration(w.durationMs)}${w.timeZone === undefined ? '' : ` (${w.timeZone})`}`;

type Sentences = { readonly [K in Policy['kind']]: (p: Extract<Policy, { kind: K }>) => string };

const sentences: Sentences = {
  concurrency: (p) => `at most ${limitText(p.limit)} at a time`,
  rate: (p) => `at most ${plural(p.count, 'start')} per ${formatDuration(p.periodMs)}`,
  window: (p) => {
    const open = `windows: ${p.windows.map(windowText).join('; ')}`;
    const ex = p.exclusions ?? [];
    return ex.length === 0 ? open : `${open}; not ${ex.map(windowText).join('; ')}`;
  },
  canary: (p) => `canary: ${plural(p.count, 'machine')}, then ${formatDuration(p.soakMs)}`,
  batches: (p) => `batches, ${formatDuration(p.soakMs)} apart`,
  'machine-soak': (p) => `each machine soaks ${formatDuration(p.soakMs)}`,
  zones: (p) =>
    `one zone at a time by ${p.label}${p.order === undefined ? '' : ` (${p.order.join(', ')})`}`,
  'control-plane-first': () => 'control planes first',
  'failure-budget': (p) => `halt after ${String(p.maxFailed)} failed`,
  // The name only: a gate's URL may carry credentials.
  gate: (p) => `gate ${p.name}`,
};

/** One policy as a sentence: `at most 2 machines at a time`, `canary: 1 machine, then 10m`. */
export function policyText(p: Policy): string {
  return (sentences[p.kind] as (q: Policy) => string)(p);
}

/** The pool's rules besides its policies, as sentences; nothing for a default. */
export function poolRuleTexts(pool: Pool): string[] {
  const out: string[] = [];
  if (pool.requireApproval === true) out.push('a person approves each rollout');
  if (pool.minReleaseAgeMs !== undefined && pool.minReleaseAgeMs > 0)
    out.push(`releases at least ${formatDuration(pool.minReleaseAgeMs)} old`);
  if (pool.phased !== undefined)
    out.push(
      `phased: ${String(Math.round(pool.phased.startFraction * 100))}% at once, all within ${formatDuration(pool.phased.durationMs)}`,
    );
  if (pool.strategy === 'replace') out.push('machines are replaced, not upgraded in place');
  if (pool.onHalt === 'rollback') out.push('on halt: roll back by itself');
  if (pool.onHold === 'skip') out.push('held machines: finish without them, catch them up later');
  if (pool.stage?.ahead === true)
    out.push(
      `stages the release ahead of each start, ${String(pool.stage.concurrency)} machine${pool.stage.concurrency === 1 ? '' : 's'} at a time`,
    );
  return out;
}

/** What the pool follows: `channel stable`, `what pool staging finished`, or nothing. */
export function poolFollows(pool: Pool): string | undefined {
  if (pool.promoteFrom !== undefined) return `what pool ${pool.promoteFrom} finished`;
  return pool.channel === undefined ? undefined : `channel ${pool.channel}`;
}
