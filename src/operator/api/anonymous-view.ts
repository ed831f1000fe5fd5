// SPDX-License-Identifier: Apache-2.0
/**
 * What the dashboard tells a reader who has not signed in (`dashboard.anonymousRead`): the fleet's
 * shape and progress, never a person's words or a way in. Every answer such a reader gets — the
 * page's data, each read, each event, each error — passes through {@link anonymousView}, which
 * rewrites every string in it:
 *
 * - a person's words (e.g. an incident ticket) and name: a current hold's reason wherever it
 *   appears, and whatever follows `held until <time>: ` and `blocked by <who>: ` in any message —
 *   a released hold's reason in history or a rollout's reasons, a release block's in a halt, an
 *   agent's `MOLT_MACHINE_HELD` (`core/quoted-reasons.ts` forms those phrases, so the two cannot
 *   drift): that a machine is held or a release blocked shows, not why nor by whom;
 * - every agent endpoint (its URL, origin, `host:port` and host name), so failures that name the
 *   agent they could not reach (`the agent of w-1 at https://10.0.0.5:7443 is unreachable:
 *   connect ECONNREFUSED 10.0.0.5:7443`) do not map the fleet's network;
 * - any other URL (a provider's, a registry's, an endpoint since changed) and any IP literal.
 *
 * One function over the whole answer rather than care at each message: a message added later, or
 * an error text quoting another, is covered without anyone remembering to.
 */
import { hiddenReason, withoutReasons } from '../../core/quoted-reasons.ts';
import type { StoredState } from '../ports/store.ts';

export { hiddenReason } from '../../core/quoted-reasons.ts';

/** What replaces a hidden address. */
export const hiddenAddress = '[address hidden]';

/** Rewrites one string for a reader who has not signed in. */
export type Redact = (text: string) => string;

// A URL up to white space or a quote, not counting punctuation that ends a sentence.
const anyUrl = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]*[^\s"'<>`.,;:!?)\]]/gi;
// An IPv4 literal with or without its port (an error's `connect EHOSTUNREACH 10.0.0.5`), or a
// bracketed IPv6 one. molt's versions are semver (three numbers), so none is taken for one.
const ipLiteral =
  /(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?(?![\w.]*\d)|\[[0-9a-f.]*:[0-9a-f:.]*\](?::\d{1,5})?/gi;

const replaceAll = (text: string, what: string, by: string): string =>
  what === '' ? text : text.split(what).join(by);

/** `: <reason>` as messages quote it, not running on into a word (a reason `x`, `: xylophone`). */
const quotedReason = (reason: string): RegExp =>
  new RegExp(`: ${reason.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\p{L}\\p{N}])`, 'gu');

/** The forms an endpoint takes in messages: as written, its origin, `host:port`, its host. */
function endpointForms(endpoint: string, ids: ReadonlySet<string>): string[] {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return [endpoint];
  }
  // A bare host name is hidden only when it cannot be a word the page needs (a machine id).
  const host = url.hostname;
  const bareHost = (host.includes('.') || host.includes(':')) && !ids.has(host) ? [host] : [];
  return [endpoint, url.href, url.origin, url.host, ...bareHost];
}

/**
 * The redaction for the stored state now: every quoted reason (by its phrase), its holds' reasons
 * (also where no phrase quotes them: a hold's own `reason`) and its machines' endpoints.
 */
export function anonymousRedactor(stored: Pick<StoredState, 'machines' | 'holds'>): Redact {
  const reasons = Object.values(stored.holds)
    .map((h) => h.reason.trim())
    .filter((r) => r !== '')
    .map((r) => ({ whole: r, quoted: quotedReason(r) }));
  const ids = new Set(stored.machines.map((m) => m.id));
  // Longest first: a URL goes whole before its host could be cut out of it.
  const addresses = [...new Set(stored.machines.flatMap((m) => endpointForms(m.endpoint, ids)))]
    .filter((a) => a !== '')
    .toSorted((a, b) => b.length - a.length);
  return (text) => {
    let out = withoutReasons(text);
    for (const r of reasons)
      out = out === r.whole ? hiddenReason : out.replace(r.quoted, `: ${hiddenReason}`);
    for (const a of addresses) out = replaceAll(out, a, hiddenAddress);
    return out.replace(anyUrl, hiddenAddress).replace(ipLiteral, hiddenAddress);
  };
}

/** `value` (a JSON answer) with every string in it passed through `redact`; keys are kept. */
export function anonymousView<T>(value: T, redact: Redact): T {
  return walk(value, redact) as T;
}

function walk(v: unknown, redact: Redact): unknown {
  if (typeof v === 'string') return redact(v);
  if (Array.isArray(v)) return v.map((x) => walk(x, redact));
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, redact)]));
}
