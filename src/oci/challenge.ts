// SPDX-License-Identifier: Apache-2.0
/** One authentication challenge from a `WWW-Authenticate` header (RFC 7235). */
export interface Challenge {
  /** The scheme, lower-cased: `basic`, `bearer`, … */
  readonly scheme: string;
  /** Parameters with lower-cased names (`realm`, `service`, `scope`, `error`). */
  readonly params: Readonly<Record<string, string>>;
}

const tokenChars = /[!#$%&'*+.^_`|~0-9A-Za-z-]/;

/**
 * Parse every challenge in a `WWW-Authenticate` value, e.g.
 * `Bearer realm="https://auth.example/token",service="registry",scope="repository:a/b:pull"`.
 * Quoted strings may contain commas and escaped quotes; unknown or malformed parts are skipped
 * rather than failing, because registries vary and the caller falls back to MOLT_REGISTRY_UNAUTHORIZED.
 */
export function parseChallenges(header: string | null): Challenge[] {
  const out: Challenge[] = [];
  if (header === null) return out;
  const s = { text: header, pos: 0 };
  while (skipSeparators(s) < s.text.length) {
    const scheme = readToken(s);
    if (scheme === '') break;
    const params: Record<string, string> = {};
    while (readParam(s, params));
    out.push({ scheme: scheme.toLowerCase(), params });
  }
  return out;
}

interface Scanner {
  readonly text: string;
  pos: number;
}

function skipSeparators(s: Scanner): number {
  while (
    s.pos < s.text.length &&
    (s.text[s.pos] === ' ' || s.text[s.pos] === ',' || s.text[s.pos] === '\t')
  )
    s.pos++;
  return s.pos;
}

function readToken(s: Scanner): string {
  const start = s.pos;
  while (s.pos < s.text.length && tokenChars.test(s.text.charAt(s.pos))) s.pos++;
  return s.text.slice(start, s.pos);
}

/** Read `name=value` (value a token or quoted string); false, with the position unchanged, otherwise. */
function readParam(s: Scanner, params: Record<string, string>): boolean {
  const start = s.pos;
  skipSeparators(s);
  const name = readToken(s);
  if (name === '' || s.text[s.pos] !== '=') {
    s.pos = start;
    return false;
  }
  s.pos++;
  params[name.toLowerCase()] = s.text[s.pos] === '"' ? readQuoted(s) : readToken(s);
  return true;
}

function readQuoted(s: Scanner): string {
  let value = '';
  s.pos++;
  while (s.pos < s.text.length && s.text[s.pos] !== '"') {
    if (s.text[s.pos] === '\\') s.pos++;
    value += s.text.charAt(s.pos);
    s.pos++;
  }
  s.pos++;
  return value;
}
