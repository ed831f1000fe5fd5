// SPDX-License-Identifier: Apache-2.0
/**
 * The page with its first data in it: `index.html` as served carries the state the
 * viewer may see (`dashboard-state.ts`) — or only who they are, when they must sign in first — in
 * a `<script type="application/json">` the browser never runs, so the first paint draws the fleet
 * instead of an empty page waiting for its first fetch. The JSON is escaped so nothing in it can
 * end the script element (`<` as `\u003c`), and the page's modules read it as text.
 */
import { ErrorCode, MoltError } from '../../core/errors.ts';

/** The id of the element holding the embedded state (`src/dashboard/main.ts` reads it). */
export const initialStateId = 'molt-state';

const entryScript = '<script type="module"';

/** JSON that is safe inside a script element: no `<` (so no `</script>`), no line separators. */
export const scriptSafeJson = (value: unknown): string =>
  JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');

/** A function of the state giving the page with it embedded before the entry module. */
export function pageTemplate(html: string): (state: unknown) => string {
  const at = html.indexOf(entryScript);
  if (at < 0 || html.indexOf(entryScript, at + 1) >= 0)
    throw new MoltError(ErrorCode.Internal, 'the dashboard page must load exactly one module');
  const [before, after] = [html.slice(0, at), html.slice(at)];
  return (state) =>
    `${before}<script id="${initialStateId}" type="application/json">${scriptSafeJson(state)}</script>\n    ${after}`;
}
