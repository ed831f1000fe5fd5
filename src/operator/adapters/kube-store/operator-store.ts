// SPDX-License-Identifier: Apache-2.0
/**
 * {@link OperatorStore} on the Kubernetes API (`store: kubernetes`, docs/adr/0016): the operator's
 * state in `OperatorRecord` objects of one namespace (`records.ts`), so an operator running in the
 * cluster it upgrades needs no etcd of its own. Passes `testkit/operator-store-conformance.ts`
 * against a real kube-apiserver, like the etcd and memory stores.
 *
 * | record (kind / key) | data |
 * |---|---|
 * | `machine` / id | {@link MachineRecord} |
 * | `rollout` / id | `{rollout, starts}`: the rollout and its start records (`rollouts.ts`) |
 * | `hold` / machine | {@link Hold} |
 * | `block` / `blockKey` | {@link ReleaseBlock} |
 * | `cursor` / sink | `{seq}`: how far a notification sink got |
 * | `history` / page | `{events}`: 50 events (`history.ts`) |
 * | `kubeplans` / cluster | `{plans}`: the cluster's Kubernetes plans (`kube-upgrades.ts`) |
 * | `kubedesired` / cluster | {@link KubeDesiredRecord} |
 *
 * `read()` is one list of the machine, rollout, hold and block records: one etcd revision, so a
 * start record and the progress it set are always seen together.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import type { KubeDesiredRecord } from '../../ports/kube-upgrade-store.ts';
import {
  blockKey,
  type Hold,
  type MachineRecord,
  type OperatorStore,
  type ReleaseBlock,
  type StoredState,
} from '../../ports/store.ts';
import { decodeData } from './codec.ts';
import {
  appendHistory,
  history,
  historyHead,
  KEPT_PAGES,
  PAGE_EVENTS,
  type HistoryCache,
} from './history.ts';
import { kubeUpgradeStore } from './kube-upgrades.ts';
import { Records, type Read } from './records.ts';
import { createRollout, pruneStarts, recordStart, rolloutOf, updateRollout } from './rollouts.ts';

export type { KubeDesiredRecord };

export interface KubeOperatorStoreOptions {
  readonly kc: KubeConfig;
  readonly namespace: string;
  /** Lost compare-and-swap races one write tolerates before failing. @default 100 */
  readonly maxAttempts?: number;
  /** Events per history page, and pages kept (tests). @default {events: 50, kept: 20} */
  readonly historyPages?: { readonly events: number; readonly kept: number };
}

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export function createKubeOperatorStore(o: KubeOperatorStoreOptions): OperatorStore {
  const r = new Records(o);
  const cache: HistoryCache = {
    pageEvents: o.historyPages?.events ?? PAGE_EVENTS,
    keptPages: o.historyPages?.kept ?? KEPT_PAGES,
  };
  const where = (read: Read) => ({ namespace: r.namespace, kind: read.kind, key: read.key });
  return {
    read: () => read(r),
    putMachine: (m: MachineRecord) => r.put('machine', m.id, m),
    removeMachine: async (id) => {
      await r.remove('machine', id);
    },
    createRollout: (rollout) => createRollout(r, rollout),
    updateRollout: (id, change) => updateRollout(r, id, change),
    recordStart: (start, progress) => recordStart(r, start, progress),
    pruneStarts: (before) => pruneStarts(r, before),
    setHold: async (machine, hold: Hold | undefined) => {
      if (hold === undefined) await r.remove('hold', machine);
      else await r.put('hold', machine, hold);
    },
    putBlock: (b: ReleaseBlock) => r.put('block', blockKey(b.digest, b.pool), b),
    removeBlock: async (digest, pool) => {
      await r.remove('block', blockKey(digest, pool));
    },
    appendHistory: (event) => appendHistory(r, cache, event),
    history: (options) => history(r, cache, options),
    historyHead: () => historyHead(r, cache),
    async notifyCursor(sink) {
      const read = await r.get('cursor', sink);
      return read && decodeData('seq', where(read), (read.data as { seq?: unknown }).seq);
    },
    async advanceNotifyCursor(sink, seq) {
      if (!Number.isSafeInteger(seq) || seq < 0)
        throw new MoltError(ErrorCode.BadInput, `a notification cursor must be a seq, not ${seq}`);
      await r.retrying(`moving the cursor of ${sink}`, async () => {
        const read = await r.get('cursor', sink);
        if (read === undefined) return r.create('cursor', sink, { seq });
        const at = decodeData('seq', where(read), (read.data as { seq?: unknown }).seq);
        // Forward only: a deposed leader's late write never moves a cursor back.
        if (at >= seq) return undefined;
        return r.replace('cursor', sink, { seq }, read.rv);
      });
    },
    ...kubeUpgradeStore(r),
    close: () => Promise.resolve(),
  };
}

/**
 * Open the store after checking it can work at all, so a missing CRD or namespace stops the
 * operator at start with what to apply (`MOLT_STORE_UNAVAILABLE`), not at its first write.
 */
export async function openKubeOperatorStore(o: KubeOperatorStoreOptions): Promise<OperatorStore> {
  await new Records(o).check();
  return createKubeOperatorStore(o);
}

async function read(r: Records): Promise<StoredState> {
  const reads = await r.list(['machine', 'rollout', 'hold', 'block']);
  const of = (kind: Read['kind']): Read[] =>
    reads.filter((x) => x.kind === kind).sort((a, b) => byText(a.key, b.key));
  const where = (x: Read) => ({ namespace: r.namespace, kind: x.kind, key: x.key });
  const rollouts = of('rollout').map((x) => rolloutOf(r, x));
  return {
    machines: of('machine').map((x) => decodeData('machine', where(x), x.data)),
    rollouts: rollouts.map((x) => x.rollout),
    starts: rollouts
      .flatMap((x) => x.starts)
      .sort((a, b) => a.at - b.at || byText(a.rollout, b.rollout) || byText(a.machine, b.machine)),
    holds: Object.fromEntries(of('hold').map((x) => [x.key, decodeData('hold', where(x), x.data)])),
    blocks: of('block').map((x) => decodeData('block', where(x), x.data)),
  };
}
