// SPDX-License-Identifier: Apache-2.0
/**
 * {@link NodePins} over protocol's typed client of the agents' image route, on the operator's
 * mutual-TLS connections — one pool per machine that checks the agent presents that machine's
 * certificate (`agent-gateway/dispatchers.ts`). The agent answers once every image is pulled, so
 * these connections wait up to `pullTimeoutMs` (the gateway's 5 s would cut a pull short).
 */
import { ErrorCode, isMoltError, MoltError } from '../../../core/errors.ts';
import type { MtlsFetchOptions } from '../../../platform/https/mtls-fetch.ts';
import {
  createImagesAgentClient,
  type ImagesAgentClient,
} from '../../../protocol/agent-images-client.ts';
import type { NodePins } from '../../ports/node-pins.ts';
import type { MachineRecord } from '../../ports/store.ts';
import { machineDispatchers } from '../agent-gateway/dispatchers.ts';
import { machineFetch } from '../agent-gateway/index.ts';

export interface AgentNodePinsOptions extends MtlsFetchOptions {
  /** How long a machine may take to pull and pin its list. @default 600000 */
  readonly pullTimeoutMs?: number;
}

export function createAgentNodePins(o: AgentNodePinsOptions): NodePins {
  const longMs = o.pullTimeoutMs ?? 600_000;
  const pools = machineDispatchers(o, {
    connectMs: o.timeoutMs ?? 5_000,
    headersMs: longMs,
    bodyMs: longMs,
  });
  const clients = new Map<string, { endpoint: string; client: ImagesAgentClient }>();
  const client = (m: MachineRecord): ImagesAgentClient => {
    const known = clients.get(m.id);
    if (known?.endpoint === m.endpoint) return known.client;
    const c = createImagesAgentClient({
      baseUrl: m.endpoint,
      fetch: machineFetch(pools.forMachine(m), () => AbortSignal.timeout(longMs)),
    });
    clients.set(m.id, { endpoint: m.endpoint, client: c });
    return c;
  };
  return {
    async setPinned(m, images) {
      try {
        return await client(m).setPinnedImages({ images: [...images] });
      } catch (e) {
        if (isMoltError(e)) throw e;
        throw new MoltError(
          ErrorCode.AgentUnreachable,
          `the agent of ${m.id} at ${m.endpoint} is unreachable: ${e instanceof Error ? e.message : String(e)}`,
          { cause: e, retryable: true },
        );
      }
    },
    close: () => pools.close(),
  };
}
