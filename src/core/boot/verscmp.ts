// SPDX-License-Identifier: Apache-2.0
/**
 * systemd's `strverscmp_improved` (src/fundamental/string-util-fundamental.c), which systemd-boot
 * uses to order entries by `version` and by id: segments are numeric or alphabetic, `~` sorts
 * oldest, then `-`, then `^`, then `.`; longer numbers are newer; other characters separate.
 */

const isDigit = (c: string): boolean => c >= '0' && c <= '9';
const isAlpha = (c: string): boolean => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
const isVersionChar = (c: string): boolean => isDigit(c) || isAlpha(c) || '~-^.'.includes(c);
const cmp = (a: number | string, b: number | string): number => (a < b ? -1 : a > b ? 1 : 0);

function run(s: string, from: number, test: (c: string) => boolean): number {
  let k = from;
  while (k < s.length && test(s.charAt(k))) k += 1;
  return k;
}

/** One numeric or alphabetic segment at a[i…], b[j…]; returns [result, end of a, end of b]. */
function segment(a: string, b: string, i: number, j: number): [number, number, number] {
  if (isDigit(a.charAt(i)) || isDigit(b.charAt(j))) {
    const i0 = run(a, i, (c) => c === '0');
    const j0 = run(b, j, (c) => c === '0');
    const ie = run(a, i0, isDigit);
    const je = run(b, j0, isDigit);
    const r = cmp(ie - i0, je - j0) || cmp(a.slice(i0, ie), b.slice(j0, je));
    return [r, ie, je];
  }
  const ie = run(a, i, isAlpha);
  const je = run(b, j, isAlpha);
  const n = Math.min(ie - i, je - j);
  const r = cmp(a.slice(i, i + n), b.slice(j, j + n)) || cmp(ie - i, je - j);
  return [r, ie, je];
}

/**
 * The `~`, end, `-`, `^`, `.` checks before a segment: a result when they decide, else the
 * positions after the markers both strings carry.
 */
function prefixes(
  a: string,
  b: string,
  i0: number,
  j0: number,
): [number | undefined, number, number] {
  let i = i0;
  let j = j0;
  for (const mark of ['~', '', '-', '^', '.']) {
    if (mark === '') {
      // Past '~': when one string ended, the longer one is newer.
      if (i >= a.length || j >= b.length) return [cmp(a.length - i, b.length - j), i, j];
      continue;
    }
    if (a[i] !== mark && b[j] !== mark) continue;
    // The side carrying the marker is older.
    const r = cmp(Number(a[i] !== mark), Number(b[j] !== mark));
    if (r !== 0) return [r, i, j];
    i += 1;
    j += 1;
  }
  return [undefined, i, j];
}

/** < 0 when `a` is older than `b`, > 0 when newer, 0 when equivalent. Empty sorts by plain compare. */
export function strverscmpImproved(a: string, b: string): number {
  if (a === '' || b === '') return cmp(a, b);
  let i = 0;
  let j = 0;
  for (;;) {
    i = run(a, i, (c) => !isVersionChar(c));
    j = run(b, j, (c) => !isVersionChar(c));
    const [r, ie, je] = prefixes(a, b, i, j);
    if (r !== undefined) return r;
    const [s, se, te] = segment(a, b, ie, je);
    if (s !== 0) return s;
    i = se;
    j = te;
  }
}
