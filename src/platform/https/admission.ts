// SPDX-License-Identifier: Apache-2.0
/**
 * Who may hold a place on a listener, counted per peer (listener.ts wires it to the sockets).
 *
 * Two budgets, so unauthenticated sockets cannot starve authenticated ones. A socket still in its
 * TLS handshake (plain HTTP: before its first request) is *pending*: at most `maxPending` of them,
 * `maxPendingPerAddress` from one address. At either cap the oldest pending socket gives way — of
 * that address, or of the address holding the most — never the new one: a real handshake takes
 * milliseconds, a silent socket sits until its deadline, so a peer that opens silent sockets only
 * ever evicts its own and cannot keep a live client from finishing. (Node's `server.maxConnections`
 * counted those silent sockets with the established ones: 64 of them, reopened as the deadline cut
 * them, kept the operator off an agent.) A socket through its handshake (first request) is
 * *established* under its peer — the verified client certificate's identity, else its address —
 * with `maxConnectionsPerPeer` each and `maxConnections` in all; the operator role
 * (`O=molt:operator`) is outside both, so the operator always reaches its agents whoever fills the
 * listener and however many calls it has in flight (its own pools bound its connections to one
 * agent: operator/adapters/agent-gateway/dispatchers.ts). Open event streams are held per peer too (`maxStreamsPerPeer`): a
 * node certificate, which may read, cannot hold followers without end.
 *
 * In-house, on Node's own events: no library admits connections per peer and per TLS identity for
 * `node:https` (rate limiters count requests, after a connection already holds its place).
 */
import type { ErrorBody } from '../../protocol/agent.ts';
import { ErrorCode } from '../../core/errors.ts';

/** How many peers a listener holds at each stage; part of `ListenerLimits` (listener.ts). */
export interface AdmissionLimits {
  /** Sockets not yet through the TLS handshake (plain HTTP: before their first request). */
  readonly maxPending: number;
  /** Of those, from one address (IPv6: one /64). */
  readonly maxPendingPerAddress: number;
  /** Established connections, the operator role's aside. */
  readonly maxConnections: number;
  /**
   * Established connections of one peer: one client certificate, or one address without one. The
   * operator role has no such cap: its pools bound its connections.
   */
  readonly maxConnectionsPerPeer: number;
  /** Open event streams of one peer. */
  readonly maxStreamsPerPeer: number;
}

/** Who holds an established connection. */
export interface Peer {
  /** `cert:<role>:<name>`, `cert:<fingerprint>` (a certificate naming no molt role), `addr:<address>`. */
  readonly key: string;
  /** As refusals name it: `node-2 (role node)`, `198.51.100.7`. */
  readonly label: string;
  /** A verified client certificate (false: counted by address). */
  readonly certified: boolean;
  /** The operator role: outside `maxConnections` and `maxConnectionsPerPeer`. */
  readonly reserved: boolean;
}

/** Why a connection or a stream is not served: answered as an HTTP error, then closed. */
export interface Refusal {
  readonly status: 429 | 503;
  readonly body: ErrorBody;
}

/** A place, or why there is none; a place is freed once, however often `release` is called. */
export type Verdict =
  | { readonly granted: true; readonly release: () => void }
  | { readonly granted: false; readonly refusal: Refusal };

/** What the book may cut: a pending socket. */
export interface Cuttable {
  destroy(): void;
}

/**
 * The address peers are counted by: IPv4 as is (also when IPv4-mapped), IPv6 by its /64 — one
 * host usually holds a whole /64, so counting single IPv6 addresses would bound nothing.
 */
export function addressKey(address: string | undefined): string {
  if (address === undefined || address === '') return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1] !== undefined) return mapped[1];
  if (!address.includes(':')) return address;
  const [head = '', tail] = (address.split('%')[0] ?? '').split('::');
  const groups = (text: string): string[] =>
    text === '' ? [] : text.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g]));
  const h = groups(head);
  const t = tail === undefined ? [] : groups(tail);
  const zeros = Array.from({ length: Math.max(0, 8 - h.length - t.length) }, () => '0');
  const all = tail === undefined ? h : [...h, ...zeros, ...t];
  const hex = all.slice(0, 4).map((g) => (/^[0-9a-f]{1,4}$/i.test(g) ? parseInt(g, 16) : g));
  return `${hex.map((g) => g.toString(16)).join(':')}::/64`;
}

/** The peer of a connection without a verified client certificate. */
export function addressPeer(address: string | undefined): Peer {
  const key = addressKey(address);
  return { key: `addr:${key}`, label: key, certified: false, reserved: false };
}

const once = (f: () => void): (() => void) => {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    f();
  };
};

function refusal(status: 429 | 503, message: string, hint: string): Verdict {
  return {
    granted: false,
    refusal: { status, body: { code: ErrorCode.ConnectionLimit, message, hint } },
  };
}

const holder = (p: Peer): string => (p.certified ? 'one certificate' : 'one address');

/** One listener's places: pending sockets by address, connections and streams by peer. */
export class PeerBook {
  readonly #limits: AdmissionLimits;
  /** Pending sockets by address key, oldest first (a Set keeps insertion order). */
  readonly #pending = new Map<string, Set<Cuttable>>();
  readonly #pendingAddress = new Map<Cuttable, string>();
  readonly #connections = new Map<string, number>();
  readonly #streams = new Map<string, number>();
  #unreserved = 0;

  constructor(limits: AdmissionLimits) {
    this.#limits = limits;
  }

  /** Pending sockets now (tests). */
  get pending(): number {
    return this.#pendingAddress.size;
  }

  /** A socket just accepted from `address`: pending, after cutting the one that gives way, if any. */
  arrive(socket: Cuttable, address: string | undefined): void {
    const key = addressKey(address);
    const own = this.#pending.get(key);
    if (own !== undefined && own.size >= Math.max(1, this.#limits.maxPendingPerAddress))
      this.#cut(own);
    else if (this.#pendingAddress.size >= Math.max(1, this.#limits.maxPending))
      this.#cut(this.#largest());
    const set = own ?? new Set<Cuttable>();
    set.add(socket);
    this.#pending.set(key, set);
    this.#pendingAddress.set(socket, key);
  }

  /** `socket` is no longer pending: established, or closed. Idempotent. */
  settle(socket: Cuttable): void {
    const key = this.#pendingAddress.get(socket);
    if (key === undefined) return;
    this.#pendingAddress.delete(socket);
    const set = this.#pending.get(key);
    set?.delete(socket);
    if (set?.size === 0) this.#pending.delete(key);
  }

  /** An established connection for `peer`, or the cap it would pass. */
  admit(peer: Peer): Verdict {
    const held = this.#connections.get(peer.key) ?? 0;
    if (!peer.reserved && held >= this.#limits.maxConnectionsPerPeer)
      return refusal(
        429,
        `${peer.label} already holds ${String(held)} connections to this listener, the most ${holder(peer)} may`,
        'close idle clients, or retry once some of them closed',
      );
    if (!peer.reserved && this.#unreserved >= this.#limits.maxConnections)
      return refusal(
        503,
        `this listener already serves ${String(this.#unreserved)} connections, its cap`,
        'retry in a moment',
      );
    this.#connections.set(peer.key, held + 1);
    if (!peer.reserved) this.#unreserved++;
    return {
      granted: true,
      release: once(() => {
        decrement(this.#connections, peer.key);
        if (!peer.reserved) this.#unreserved--;
      }),
    };
  }

  /** An open event stream for `peer`, or the cap it would pass. */
  openStream(peer: Peer): Verdict {
    const held = this.#streams.get(peer.key) ?? 0;
    if (held >= this.#limits.maxStreamsPerPeer)
      return refusal(
        429,
        `${peer.label} already holds ${String(held)} open event streams on this listener, the most ${holder(peer)} may`,
        'end a follower (`--follow`) first, or retry once one ended',
      );
    this.#streams.set(peer.key, held + 1);
    return {
      granted: true,
      release: once(() => {
        decrement(this.#streams, peer.key);
      }),
    };
  }

  /** The pending sockets of the address holding the most (on a tie, the one pending longest). */
  #largest(): Set<Cuttable> | undefined {
    let most: Set<Cuttable> | undefined;
    for (const set of this.#pending.values()) if (set.size > (most?.size ?? 0)) most = set;
    return most;
  }

  /** Cut the oldest socket of `set`. */
  #cut(set: Set<Cuttable> | undefined): void {
    const oldest = set?.values().next().value;
    if (oldest === undefined) return;
    this.settle(oldest);
    oldest.destroy();
  }
}

function decrement(counts: Map<string, number>, key: string): void {
  const n = (counts.get(key) ?? 0) - 1;
  if (n > 0) counts.set(key, n);
  else counts.delete(key);
}
