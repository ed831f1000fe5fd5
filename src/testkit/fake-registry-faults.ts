// SPDX-License-Identifier: Apache-2.0
import { sha256 } from './fake-registry-store.ts';
import type { Reply } from './fake-registry-routes.ts';

/** A fault the fake registry can inject into matching requests. */
export type Fault =
  /** Answer with this status (5xx, 429 with `headers: {'retry-after': '1'}`, 401, plain-text 404, …). */
  | {
      readonly kind: 'status';
      readonly status: number;
      readonly body?: string;
      readonly contentType?: string;
      readonly headers?: Readonly<Record<string, string>>;
    }
  /** Destroy the connection without answering. */
  | { readonly kind: 'reset' }
  /** Wait before answering normally (to trigger client timeouts). */
  | { readonly kind: 'delay'; readonly ms: number }
  /** Send headers and the first `afterBytes` of the body, then stall forever. */
  | { readonly kind: 'stall'; readonly afterBytes: number }
  /** Announce a `Docker-Content-Digest` that is not the body's. */
  | { readonly kind: 'wrong-digest' }
  /** Flip the last byte of the body, keeping the headers. */
  | { readonly kind: 'corrupt-body' }
  /** Serve `bytes` bytes of JSON-ish padding; `declareLength: false` sends it chunked with no Content-Length. */
  | { readonly kind: 'oversize'; readonly bytes: number; readonly declareLength?: boolean }
  /**
   * Send headers (no `Content-Length`) and then zeros without end, as fast as the client reads,
   * until it hangs up; `sent.bytes` counts what was written (a hostile registry).
   */
  | { readonly kind: 'endless'; readonly sent: { bytes: number } }
  /** Serve a body that is not JSON (with a matching `Docker-Content-Digest`). */
  | { readonly kind: 'garbage' }
  /** Replace the `Content-Type`. */
  | { readonly kind: 'content-type'; readonly contentType: string };

/** When to inject a fault. */
export interface FaultRule {
  /** HTTP method to match; any when omitted. */
  readonly method?: string;
  /** Matched against path + query; any when omitted. */
  readonly path?: RegExp;
  /** How many matching requests get the fault. @default Infinity */
  times?: number;
  readonly fault: Fault;
}

/** The first rule matching the request, its remaining count decremented. */
export function takeFault(rules: FaultRule[], method: string, path: string): Fault | undefined {
  const rule = rules.find(
    (r) =>
      (r.times ?? 1) > 0 &&
      (r.method === undefined || r.method === method) &&
      (r.path === undefined || r.path.test(path)),
  );
  if (rule === undefined) return undefined;
  if (rule.times !== undefined) rule.times--;
  return rule.fault;
}

const zeroDigest = `sha256:${'0'.repeat(64)}`;

/** Rewrite a normal reply according to a body-level fault. */
export function applyFault(reply: Reply, fault: Fault | undefined): Reply {
  if (fault === undefined) return reply;
  if (fault.kind === 'wrong-digest') {
    return { ...reply, headers: { ...reply.headers, 'docker-content-digest': zeroDigest } };
  }
  if (fault.kind === 'content-type') {
    return { ...reply, headers: { ...reply.headers, 'content-type': fault.contentType } };
  }
  if (fault.kind === 'oversize') return { ...reply, body: new Uint8Array(fault.bytes).fill(0x20) };
  if (fault.kind === 'corrupt-body') return corrupt(reply);
  if (fault.kind === 'garbage') return garbage(reply);
  return reply;
}

function corrupt(reply: Reply): Reply {
  const copy = Uint8Array.from(reply.body ?? new Uint8Array(0));
  const last = copy.byteLength - 1;
  if (last >= 0) copy[last] = (copy[last] ?? 0) ^ 0xff;
  return { ...reply, body: copy };
}

/** A consistently broken registry: the announced digest matches the garbage it sends. */
function garbage(reply: Reply): Reply {
  const body = new TextEncoder().encode('<html>this is not JSON {');
  const headers =
    'docker-content-digest' in reply.headers
      ? { ...reply.headers, 'docker-content-digest': sha256(body) }
      : reply.headers;
  return { ...reply, headers, body };
}
