// SPDX-License-Identifier: Apache-2.0
/**
 * Declared holds and pins (docs/adr/0011; `declared.ts` plans the rest): each `MachineHold` is the
 * store's hold of its machine (a pin with `version`) unless a person holds it; the operator's holds
 * whose object is gone are cleared.
 */
import { DeclaredHoldPrefix } from '../../protocol/kube-resources.ts';
import type { DeclaredHold, DeclaredVerdict, InvalidObject } from '../ports/declared.ts';
import type { Hold } from '../ports/store.ts';
import { Forever, isInvalid, type DeclaredInput, type HoldChange } from './declared-types.ts';
import { instant } from '../../core/time.ts';

const isDeclaredHold = (h: Hold | undefined): boolean =>
  h !== undefined && (h.by ?? '').startsWith(DeclaredHoldPrefix);

const holdVerdict = (
  h: DeclaredHold | InvalidObject,
  accepted: boolean,
  reason: string,
  message: string,
): DeclaredVerdict => ({
  kind: 'MachineHold',
  name: h.name,
  generation: h.generation,
  accepted,
  reason,
  message,
});

/** One MachineHold's verdict, and the store hold it wants (none when a person holds the machine). */
function judgeHold(
  h: DeclaredHold | InvalidObject,
  i: DeclaredInput,
  known: ReadonlySet<string>,
): { verdict: DeclaredVerdict; hold?: Hold } {
  if (isInvalid(h)) return { verdict: holdVerdict(h, false, 'InvalidSpec', h.invalid) };
  if (!known.has(h.machine))
    return {
      verdict: holdVerdict(
        h,
        false,
        'UnknownMachine',
        `the operator manages no machine ${h.machine}`,
      ),
    };
  const current = i.stored.holds[h.machine];
  const ours = current === undefined || isDeclaredHold(current);
  const until = h.until ?? Forever;
  const verdict =
    h.version !== undefined
      ? holdVerdict(h, true, 'Pinned', `${h.machine} stays on ${h.version}`)
      : until <= i.now
        ? holdVerdict(h, true, 'Expired', `ended ${instant(until)}`)
        : holdVerdict(
            h,
            true,
            'Held',
            ours
              ? `${h.machine} is held`
              : `${h.machine} is also held by ${current.by ?? 'a person'}`,
          );
  const hold = {
    reason: h.reason,
    until,
    by: `${DeclaredHoldPrefix}${h.name}`,
    ...(h.version !== undefined && { version: h.version }),
  };
  return { verdict, ...(ours && { hold }) };
}

const sameHold = (a: Hold | undefined, b: Hold): boolean =>
  a?.reason === b.reason && a.until === b.until && a.by === b.by && a.version === b.version;

export function declaredHolds(i: DeclaredInput): {
  changes: HoldChange[];
  verdicts: DeclaredVerdict[];
} {
  const known = new Set(i.stored.machines.map((m) => m.id));
  const wanted = new Map<string, Hold>();
  const verdicts: DeclaredVerdict[] = [];
  for (const h of i.declared.holds) {
    const judged = judgeHold(h, i, known);
    verdicts.push(judged.verdict);
    // Two objects holding one machine: the first listed (by name) is the store's.
    if (judged.hold !== undefined && !isInvalid(h) && !wanted.has(h.machine))
      wanted.set(h.machine, judged.hold);
  }
  const changes: HoldChange[] = [...wanted]
    .filter(([machine, hold]) => !sameHold(i.stored.holds[machine], hold))
    .map(([machine, hold]) => ({ machine, hold }));
  for (const [machine, hold] of Object.entries(i.stored.holds))
    if (isDeclaredHold(hold) && !wanted.has(machine)) changes.push({ machine, hold: undefined });
  return { changes, verdicts };
}
