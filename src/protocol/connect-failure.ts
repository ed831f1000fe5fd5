// SPDX-License-Identifier: Apache-2.0
/**
 * Why a connection failed, for a person: `fetch` says only `fetch failed`; the reason is in its
 * `cause` (an error with a system `code`, or an AggregateError of one per address tried), and a
 * raw OpenSSL message runs over several lines. {@link connectFailure} reads the code and says it
 * in words, on one line.
 */

/** What failed, in words, and the code it was read from (when there was one). */
export interface ConnectFailure {
  readonly code: string | undefined;
  /** One line, e.g. `connection refused (ECONNREFUSED): nothing listens there`. */
  readonly text: string;
}

const words: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused: nothing listens there',
  ENOTFOUND: 'DNS: no such host',
  EAI_AGAIN: 'DNS lookup failed (temporarily)',
  EAI_NONAME: 'DNS: no such host',
  ETIMEDOUT: 'timed out connecting',
  UND_ERR_CONNECT_TIMEOUT: 'timed out connecting',
  EHOSTUNREACH: 'no route to the host',
  ENETUNREACH: 'no route to the network',
  ECONNRESET: 'the connection was reset',
  EPIPE: 'the connection was closed',
  UND_ERR_SOCKET: 'the other side closed the connection',
  UND_ERR_CLOSED: 'the connection was closed',
  ANSWER_TIMEOUT: 'connected, but no answer in time',
  BODY_TIMEOUT: 'the answer stopped coming',
};

interface Failure {
  readonly code?: unknown;
  readonly message?: unknown;
  readonly cause?: unknown;
  readonly errors?: unknown;
}

/** The innermost error that says something: the cause chain, then an AggregateError's first. */
function innermost(e: unknown): Failure {
  let x: unknown = e;
  for (let depth = 0; depth < 8 && typeof x === 'object' && x !== null; depth++) {
    const f = x as Failure;
    if (typeof f.code === 'string') return f;
    if (Array.isArray(f.errors) && f.errors.length > 0) x = f.errors[0];
    else if (f.cause !== undefined) x = f.cause;
    else return f;
  }
  return typeof x === 'object' && x !== null ? x : { message: String(x) };
}

/**
 * OpenSSL's `…:error:0A00010B:SSL routines:…:wrong version number:…` is read as its reason;
 * any other message is folded onto one line.
 */
export function oneLine(message: string): string {
  const ssl = /error:[0-9A-F]+:[^:]*routines:[^:]*:([^:\n]+)/.exec(message);
  const text = ssl?.[1] ?? message;
  return text.replace(/\s+/g, ' ').trim();
}

/** Why `e` (a failed `fetch`, a socket error) failed, in words. */
export function connectFailure(e: unknown): ConnectFailure {
  const f = innermost(e);
  const code = typeof f.code === 'string' ? f.code : undefined;
  const message = typeof f.message === 'string' ? oneLine(f.message) : '';
  if (code !== undefined && words[code] !== undefined)
    return { code, text: `${words[code]} (${code})` };
  if (code === undefined && message === 'bad port')
    return { code, text: 'fetch refuses to connect to this port (a port it blocks, e.g. 1 or 25)' };
  if (code !== undefined) return { code, text: message === '' ? code : `${code}: ${message}` };
  return { code, text: message === '' ? 'unknown failure' : message };
}
