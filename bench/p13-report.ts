// SPDX-License-Identifier: Apache-2.0
/**
 * P13's verdict on each side (p13.ts): its seconds and what the sampler's looks in its window say
 * about its node — then the table and the `BENCH P13 …` line.
 */
import { phaseSeconds, type ByHand } from './p13-by-hand.ts';
import { evictedReadySeconds, notReadySeconds, violations, type Look } from './p13-sampler.ts';

/** One side's numbers. */
export interface Side {
  /** End to end: the operator's machine start → result, or the person's first command → last. */
  readonly seconds: number;
  readonly violations: number;
  readonly evictedReadyS: number;
  readonly notReadyS: number;
  readonly looks: number;
}

/** A side's numbers from its seconds and the looks in its window. */
export function judge(
  looks: readonly Look[],
  node: string,
  seconds: number,
  budgets: { minimum: Record<string, number>; full: Record<string, number> },
): Side {
  return {
    seconds,
    violations: violations(looks, budgets.minimum).length,
    evictedReadyS: evictedReadySeconds(looks, node, budgets.full),
    notReadyS: notReadySeconds(looks, node),
    looks: looks.length,
  };
}

/** A label and its value; a label as wide as the column still gets a space before the value. */
export const row = (k: string, v: string): string => `${k.padEnd(61)} ${v}\n`;
export const f1 = (n: number): string => n.toFixed(1);

/** The table, each side's steps, and the `BENCH P13 …` line (ratio = molt / by hand). */
export function report(
  m: { side: Side; phases: [string, number][] },
  h: { side: Side; run: ByHand },
  o: { minimum: Record<string, number>; version: string; moltNode: string; handNode: string },
): void {
  const { minimum } = o;
  const out = [
    `P13 — a real VM node upgraded to ${o.version} under shop/web (6, minAvailable ${String(minimum['web'])}) and shop/db (3, minAvailable ${String(minimum['db'])}), molt vs by hand\n`,
    row(`molt: canary ${o.moltNode}, machine start → result`, `${f1(m.side.seconds)} s`),
    ...m.phases.map(([p, s]) => row(`  ${p}`, `${f1(s)} s`)),
    row(`by hand: ${o.handNode}, kubectl drain → kubectl uncordon`, `${f1(h.side.seconds)} s`),
    ...h.run.steps.map(([p, s]) => row(`  ${p}`, `${f1(s)} s`)),
    ...phaseSeconds(h.run.events)
      .filter(([p]) => p === 'Cordoning' || p === 'Draining')
      .map(([p, s]) => row(`    its agent's ${p} (nothing left to do)`, `${f1(s)} s`)),
  ];
  for (const [name, s] of [
    ['molt', m.side],
    ['by hand', h.side],
  ] as const)
    out.push(
      row(
        `${name}: budget violations / evicted→Ready elsewhere / NotReady`,
        `${String(s.violations)} of ${String(s.looks)} looks / ${f1(s.evictedReadyS)} s / ${f1(s.notReadyS)} s`,
      ),
    );
  process.stdout.write(out.join(''));
  process.stdout.write(
    `BENCH P13 ratio=${(m.side.seconds / h.side.seconds).toFixed(2)} pdb_violations=${String(m.side.violations)} ` +
      `evicted_ready_s=${f1(m.side.evictedReadyS)} node_notready_s=${f1(m.side.notReadyS)} ` +
      `molt_s=${f1(m.side.seconds)} by_hand_s=${f1(h.side.seconds)} by_hand_pdb_violations=${String(h.side.violations)}\n`,
  );
}
