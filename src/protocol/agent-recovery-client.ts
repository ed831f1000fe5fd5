// SPDX-License-Identifier: Apache-2.0
/**
 * The agent's recovery routes whose bodies are byte streams (`agent-kubernetes.ts`, docs/adr/0012
 * §6): an etcd snapshot downloaded, a snapshot uploaded for a restore, a service's log as lines.
 * The JSON routes are `agent-kubernetes-client.ts`'s.
 */
import { ErrorCode, MoltError } from '../core/errors.ts';
import { EtcdMemberView, KubernetesRoutes as R, RestoreAnswerMs } from './agent-kubernetes.ts';
import { AgentPeer } from './agent-client.ts';
import { createTransport, postJson, queryString, type HttpFetch } from './http-client.ts';

/** UTF-8 decoding is a global in every runtime molt's clients run in (Node, browsers). */
declare const TextDecoder: new (label?: string) => {
  decode(input?: Uint8Array, options?: { stream?: boolean }): string;
};

export interface RecoveryAgentClient {
  readonly baseUrl: string;
  /** The machine's etcd member's snapshot, as bytes to write to a file (admin). */
  etcdSnapshot(): Promise<AsyncIterable<Uint8Array>>;
  /** Restore this machine's etcd from a snapshot's bytes; resolves once its member leads alone (admin). */
  etcdRestore(snapshot: AsyncIterable<Uint8Array>): Promise<EtcdMemberView[]>;
  /** A service's log lines: the last `tail`, then new ones while `follow` until the caller stops. */
  serviceLogs(name: string, o?: { tail?: number; follow?: boolean }): AsyncIterable<string>;
}

export function createRecoveryAgentClient(options: {
  baseUrl: string;
  fetch: HttpFetch;
}): RecoveryAgentClient {
  const t = createTransport({
    ...options,
    peer: AgentPeer,
  });
  const broke = (what: string, e: unknown): MoltError =>
    new MoltError(ErrorCode.AgentUnreachable, `${what} from ${t.baseUrl} broke off: ${String(e)}`, {
      cause: e,
      retryable: true,
    });
  return {
    baseUrl: t.baseUrl,
    async etcdSnapshot() {
      const res = await t.open(R.etcdSnapshot, {
        ...postJson({}),
        headers: { 'content-type': 'application/json', accept: 'application/octet-stream' },
      });
      return guarded(res.body ?? empty(), (e) => broke('the snapshot', e));
    },
    etcdRestore: (snapshot) =>
      t.json(EtcdMemberView.array(), R.etcdRestore, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream', accept: 'application/json' },
        body: snapshot,
        answerWithinMs: RestoreAnswerMs,
      }),
    async *serviceLogs(name, o = {}) {
      const query = queryString({
        tail: o.tail === undefined ? undefined : String(o.tail),
        follow: o.follow === true ? 'true' : undefined,
      });
      const res = await t.open(R.serviceLogs(name) + query, {
        method: 'GET',
        headers: { accept: 'text/plain' },
      });
      yield* lines(guarded(res.body ?? empty(), (e) => broke(`the log of ${name}`, e)));
    },
  };
}

async function* empty(): AsyncGenerator<Uint8Array> {
  // an answer without a body: nothing to yield
}

/** `chunks`, a transport failure in the middle turned into a MoltError by `wrap`. */
async function* guarded(
  chunks: AsyncIterable<Uint8Array>,
  wrap: (e: unknown) => MoltError,
): AsyncGenerator<Uint8Array> {
  try {
    yield* chunks;
  } catch (e) {
    throw e instanceof MoltError ? e : wrap(e);
  }
}

/** Text lines of a UTF-8 byte stream, without their line ends; a last line without one too. */
export async function* lines(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8');
  let buffer = '';
  for await (const chunk of chunks) {
    const parts = (buffer + decoder.decode(chunk, { stream: true })).split('\n');
    buffer = parts.pop() ?? '';
    yield* parts;
  }
  buffer += decoder.decode();
  if (buffer !== '') yield buffer;
}
