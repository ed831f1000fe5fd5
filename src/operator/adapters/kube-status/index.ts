// SPDX-License-Identifier: Apache-2.0
/**
 * Runs the Kubernetes status mirror beside the reconcile loop (docs/adr/0006 §9): `kick()` after
 * each of the leader's passes asks for one sync; syncs never overlap and kicks during one collapse
 * into a single follow-up. A failing sync is logged (once per distinct error) and retried at the
 * next kick; it never holds up the loop.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Pool } from '../../../core/rollout/types.ts';
import type { ObservationBook } from '../../api/observations.ts';
import type { OperatorStore } from '../../ports/store.ts';
import { createKubeStatusMirror } from './mirror.ts';
import { errorMessage } from '../../../core/errors.ts';

export interface KubeStatusOptions {
  readonly kc: KubeConfig;
  readonly namespace: string;
  readonly store: OperatorStore;
  /** The pools as they are now (declared pools change). */
  readonly pools: () => readonly Pool[];
  readonly observations: ObservationBook;
  readonly now: () => number;
  readonly log: (line: string) => void;
}

export interface KubeStatus {
  kick(): void;
  /** Waits for a sync under way. */
  stop(): Promise<void>;
}

export function startKubeStatus(o: KubeStatusOptions): KubeStatus {
  const mirror = createKubeStatusMirror({ kc: o.kc, namespace: o.namespace });
  // Read through an object: the sync loop must see kicks and a stop that happen while it awaits.
  const flags = { again: false, stopped: false };
  const more = (): boolean => flags.again && !flags.stopped;
  let running: Promise<void> | undefined;
  let lastError = '';
  const once = async (): Promise<void> => {
    try {
      const state = await o.store.read();
      await mirror.sync(
        { state, pools: o.pools(), observed: (m) => o.observations.get(m) },
        (afterSeq) => o.store.history(afterSeq === undefined ? {} : { afterSeq }),
        o.now(),
      );
      if (lastError !== '') o.log('Kubernetes status mirror: in sync again');
      lastError = '';
    } catch (e) {
      const line = errorMessage(e);
      if (line !== lastError)
        o.log(`Kubernetes status mirror: ${line} (retrying after the next pass)`);
      lastError = line;
    }
  };
  const run = async (): Promise<void> => {
    do {
      flags.again = false;
      await once();
    } while (more());
    running = undefined;
  };
  return {
    kick() {
      if (flags.stopped) return;
      if (running !== undefined) flags.again = true;
      else running = run();
    },
    async stop() {
      flags.stopped = true;
      await running;
    },
  };
}
