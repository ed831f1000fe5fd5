// SPDX-License-Identifier: Apache-2.0
/**
 * The page's routes, in the URL's hash (no server round trip, nothing for the listener to serve):
 * `#/` the fleet, `#/releases` (releases and pools), `#/rollout/<id>`, `#/machine/<id>`, `#/login`.
 */

/** Where the page is. */
export type Route =
  | { readonly page: 'overview' }
  | { readonly page: 'login' }
  | { readonly page: 'releases' }
  | { readonly page: 'rollout'; readonly id: string }
  | { readonly page: 'machine'; readonly id: string };

/** The route a hash names; anything unknown is the overview. */
export function routeOf(hash: string): Route {
  const [, page = '', id = ''] = hash.replace(/^#/, '').split('/');
  let name: string;
  try {
    name = decodeURIComponent(id);
  } catch {
    return { page: 'overview' };
  }
  if (page === 'login' || page === 'releases') return { page };
  if ((page === 'rollout' || page === 'machine') && name !== '') return { page, id: name };
  return { page: 'overview' };
}

/** The hash of a route. */
export function hashOf(r: Route): string {
  if (r.page === 'overview') return '#/';
  if (r.page === 'login' || r.page === 'releases') return `#/${r.page}`;
  return `#/${r.page}/${encodeURIComponent(r.id)}`;
}
