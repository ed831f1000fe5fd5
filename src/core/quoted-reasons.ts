// SPDX-License-Identifier: Apache-2.0
/**
 * How messages quote a person's words — a hold's reason (`held until <time>: <reason>`) and a
 * release block's (`blocked by <who>: <reason>`) — and how a reader who may not see them gets the
 * message without them. One place forms the phrases and one hides what follows them, so a message
 * written here is hidden wherever it travels: in a refusal, a rollout's halt reason, a history
 * event, an error quoting another. The dashboard hides by the phrase, not by the reasons it knows
 * now: a released hold's or a lifted block's reason stays in history and rollout reasons long
 * after the store forgot it.
 */

/** What replaces a person's reason for a reader who may not read it. */
export const hiddenReason = '[reason hidden]';
/** What replaces who held or blocked, for the same reader. */
export const hiddenPerson = '[name hidden]';

/** `held until <until>[ by <by>]: <reason>`: a hold as a message quotes it. */
export const heldUntil = (until: string, reason: string, by?: string): string =>
  `held until ${until}${by === undefined ? '' : ` by ${by}`}: ${reason}`;

/** `blocked [for <scope> ]by <by>: <reason>`: a release block as a message quotes it. */
export const blockedBy = (by: string, reason: string, scope?: string): string =>
  `blocked ${scope === undefined ? '' : `for ${scope} `}by ${by}: ${reason}`;

// What follows a phrase is hidden to the end of the text: a reason is free text and may hold
// anything — a sentence, a colon, the phrase again — so no end inside it can be trusted. A time
// has no white space (but may be followed by how far it is, `(in 5m)`); a name and a scope may
// (a certificate's CN), and end at the first `: `.
const held = /\bheld until (\S+?(?: \((?:in [\dhdms]+|[\dhdms]+ ago|now)\))?)( by .+?)?: [\s\S]*$/u;
const blocked = /\bblocked (for .+? )?by .+?: [\s\S]*$/u;

/** `text` with every quoted reason, and who gave it, hidden; the rest as it was. */
export function withoutReasons(text: string): string {
  return text
    .replace(held, (_all, until: string, by: string | undefined) =>
      heldUntil(until, hiddenReason, by === undefined ? undefined : hiddenPerson),
    )
    .replace(blocked, (_all, scope: string | undefined) =>
      blockedBy(hiddenPerson, hiddenReason, scope?.slice('for '.length, -1)),
    );
}
