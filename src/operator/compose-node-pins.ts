// SPDX-License-Identifier: Apache-2.0
/**
 * Keeping GM images on the nodes, composed (docs/adr/0015 §7): on the leader, beside the loop, on
 * the discovery cadence (`discoverEvery`), over the agents' image route with the operator's
 * certificate. Only when the operator follows images (`kubernetes` in its config): the policies in
 * force are what it pins.
 */
import type { ImagePolicy } from '../core/images/types.ts';
import { createAgentNodePins } from './adapters/agent-node-pins/index.ts';
import type { LoadedConfig } from './config.ts';
import { startNodePins } from './images/node-pins.ts';
import type { Leadership } from './ports/leadership.ts';
import type { OperatorStore } from './ports/store.ts';

/** A machine that acknowledged the list is told it again after this (a wiped EPHEMERAL). */
const resendMs = 10 * 60_000;
/** A machine without a node runtime is asked again after this (it may be reinstalled as one). */
const notNodeMs = 60 * 60_000;
/** A machine that failed (rebooting, say) is asked again after this, doubled per failure. */
const retryMs = 10_000;

export function nodePinsOf(
  c: LoadedConfig,
  policies: (() => readonly ImagePolicy[]) | undefined,
  p: {
    readonly store: OperatorStore;
    readonly leadership: Leadership;
    readonly log: (line: string) => void;
  },
): { stop(): Promise<void> } | undefined {
  if (policies === undefined) return undefined;
  const pins = createAgentNodePins(c.pki);
  const running = startNodePins({
    pins,
    store: p.store,
    policies,
    now: () => Date.now(),
    log: p.log,
    timing: { resendMs, notNodeMs, retryMs },
    everyMs: c.config.discoverEvery,
    leading: () => p.leadership.isLeader(),
  });
  return {
    async stop() {
      await running.stop();
      await pins.close();
    },
  };
}
