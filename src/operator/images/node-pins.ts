// SPDX-License-Identifier: Apache-2.0
/**
 * Keeping the GM images on the nodes (docs/adr/0015 §7): the leader tells every machine the list
 * of images its container runtime keeps pinned — every GM digest of the image policies in force,
 * and the previous digests of the image rollouts still running (`core/images/node-pins.ts`) — when
 * the list changed since the machine acknowledged it, and again every `resendMs` (a `preserve:
 * false` upgrade wipes containerd's images with EPHEMERAL). A machine without a node runtime
 * answers `MOLT_NOT_KUBERNETES_NODE` and is asked again only after `notNodeMs`. A failure is one
 * log line for that machine (again only when its cause changes), never the pass's, and is retried
 * with a doubling delay; at most `concurrency` machines are asked at once.
 */
import { ErrorCode, errorMessage, isMoltError } from '../../core/errors.ts';
import {
  nodePinList,
  pinsDue,
  type PinsSent,
  type PinsTiming,
} from '../../core/images/node-pins.ts';
import type { ImagePolicy } from '../../core/images/types.ts';
import type { NodePins } from '../ports/node-pins.ts';
import type { MachineRecord, OperatorStore } from '../ports/store.ts';
import { every, type Periodic } from './every.ts';

export interface NodePinsDeps {
  readonly pins: NodePins;
  readonly store: Pick<OperatorStore, 'read'>;
  /** The image policies in force (fleet file and `ImagePolicy` objects). */
  readonly policies: () => readonly Pick<ImagePolicy, 'repository' | 'gm'>[];
  readonly now: () => number;
  readonly log: (line: string) => void;
  readonly timing: PinsTiming;
  /** @default 4 */
  readonly concurrency?: number;
}

/** What each machine last answered, by `<id> <endpoint>`. */
export type PinsBook = Map<string, PinsSent>;

/** One pass: every machine whose list is due is told it. */
export async function nodePinsPass(d: NodePinsDeps, book: PinsBook): Promise<void> {
  const { machines, rollouts } = await d.store.read();
  const list = nodePinList(d.policies(), rollouts);
  const now = d.now();
  const due = machines.filter((m) => pinsDue(book.get(keyOf(m)), list, now, d.timing));
  const queue = [...due];
  const worker = async (): Promise<void> => {
    for (let m = queue.shift(); m !== undefined; m = queue.shift()) {
      const key = keyOf(m);
      book.set(key, await tell(d, m, list, book.get(key)));
    }
  };
  await Promise.all(Array.from({ length: Math.min(d.concurrency ?? 4, due.length) }, worker));
  // Forget machines the store no longer has.
  const live = new Set(machines.map(keyOf));
  for (const key of book.keys()) if (!live.has(key)) book.delete(key);
}

/** Send `list` to machine `m`; what it answered, logged when it differs from `before`. */
async function tell(
  d: NodePinsDeps,
  m: MachineRecord,
  list: readonly string[],
  before: PinsSent | undefined,
): Promise<PinsSent> {
  const joined = list.join('\n');
  try {
    const answer = await d.pins.setPinned(m, list);
    const unpinned = answer.unpinned ?? [];
    if (before?.kind !== 'pinned' || unpinned.length > 0 || before.list !== joined)
      d.log(pinnedLine(m.id, list, unpinned));
    return { kind: 'pinned', list: joined, at: d.now() };
  } catch (e) {
    return failed(d, m.id, e, before);
  }
}

/** What a failed call leaves in the book: a machine without a node runtime, or a failure. */
function failed(d: NodePinsDeps, id: string, e: unknown, before: PinsSent | undefined): PinsSent {
  if (isMoltError(e, ErrorCode.NotKubernetesNode)) return { kind: 'not-a-node', at: d.now() };
  const why = errorMessage(e);
  if (before?.kind === 'failed' && before.why === why)
    return { ...before, at: d.now(), tries: before.tries + 1 };
  // One line per cause, not one per pass while a machine reboots.
  d.log(`${id}: images not pinned: ${why}`);
  return {
    kind: 'failed',
    at: d.now(),
    tries: before?.kind === 'failed' ? before.tries + 1 : 1,
    why,
  };
}

const keyOf = (m: { readonly id: string; readonly endpoint: string }): string =>
  `${m.id} ${m.endpoint}`;

function pinnedLine(id: string, list: readonly string[], unpinned: readonly string[]): string {
  const kept = `${id}: ${String(list.length)} image${list.length === 1 ? '' : 's'} pinned`;
  return unpinned.length === 0 ? kept : `${kept}, unpinned ${unpinned.join(', ')}`;
}

/** Run {@link nodePinsPass} every `everyMs` (the first at once) while `leading()`. */
export function startNodePins(
  d: NodePinsDeps & { readonly everyMs: number; readonly leading: () => boolean },
): Periodic {
  let book: PinsBook = new Map();
  const tick = async (): Promise<void> => {
    if (!d.leading()) {
      // A new leader asks every machine again.
      book = new Map();
      return;
    }
    try {
      await nodePinsPass(d, book);
    } catch (e) {
      // The store is away: the next pass tries again.
      d.log(`pinned images: ${errorMessage(e)}`);
    }
  };
  return every(d.everyMs, tick);
}
