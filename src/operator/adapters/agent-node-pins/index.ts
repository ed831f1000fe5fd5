// SPDX-License-Identifier: Apache-2.0
/**
 * {@link NodePins} over protocol's typed client of the agents' image route, on the operator's
 * mutual-TLS connections — one pool per machine that checks the agent presents that machine's
 * certificate (`agent-gateway/dispatchers.ts`). The agent answers once every image is pulled, so
 * these connections wait up to `pullTimeoutMs` (the gateway's 5 s would cut a pull short).
 */
import type { MtlsFetchOptions } from '../../../platform/https/mtls-fetch.ts';
import { createImagesAgentClient } from '../../../protocol/agent-images-client.ts';
import type { NodePins } from '../../ports/node-pins.ts';
import { machineCalls } from '../agent-gateway/machine-clients.ts';

export interface AgentNodePinsOptions extends MtlsFetchOptions {
  /** How long a machine may take to pull and pin its list. @default 600000 */
  readonly pullTimeoutMs?: number;
}

export function createAgentNodePins(o: AgentNodePinsOptions): NodePins {
  const { call, close } = machineCalls(o, o.pullTimeoutMs ?? 600_000, createImagesAgentClient);
  return {
    setPinned: (m, images) => call(m, (c) => c.setPinnedImages({ images: [...images] })),
    close,
  };
}
