// SPDX-License-Identifier: Apache-2.0
/**
 * Text molt shows must never carry a URL's user-info: a provider, registry or webhook address
 * written as `https://user:password@host/…` would otherwise put its password in every error that
 * names the address — in logs, in history, on the dashboard. {@link MoltError} passes its message
 * and hint through {@link withoutUserInfo}, so no molt error carries one, wherever it is made.
 */

/**
 * A scheme, `://`, and the user-info up to the authority's last `@` (a password may hold a raw
 * `@`; the authority ends at `/`, `?`, `#` or white space).
 */
const userInfo = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]*(?:@[^\s/?#@]*)*@/gi;

/** `text` with every URL's user-info dropped: `https://u:p@host/x` → `https://host/x`. */
export const withoutUserInfo = (text: string): string => text.replace(userInfo, '$1');
