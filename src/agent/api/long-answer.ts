// SPDX-License-Identifier: Apache-2.0
/**
 * A route whose answer comes once a long piece of work is done — a component's apply waits for it
 * to become healthy, a restore for etcd and the control plane to run again — sends nothing
 * meanwhile, and the listener's idle timeout (no byte either way: a silent peer) must not cut its
 * connection. A 'timeout' listener on the response is what tells Node's server to keep the socket.
 */
import type { FastifyReply } from 'fastify';

function keepOpen(): void {
  // the work is still going; its answer will come
}

/** Run `work` with the connection kept past the listener's idle timeout. */
export async function answerWhenDone<T>(reply: FastifyReply, work: () => Promise<T>): Promise<T> {
  reply.raw.on('timeout', keepOpen);
  try {
    return await work();
  } finally {
    reply.raw.off('timeout', keepOpen);
  }
}
