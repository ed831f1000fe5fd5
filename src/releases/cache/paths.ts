// SPDX-License-Identifier: Apache-2.0
import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { cacheKey } from './types.ts';

/**
 * The default cache file of a registry + repository:
 * `$XDG_CACHE_HOME/molt/releases/<name>.json`, or `~/.cache/molt/releases/<name>.json` when
 * XDG_CACHE_HOME is unset or not absolute (the XDG spec says to ignore relative values).
 *
 * @example defaultCachePath(process.env, '127.0.0.1:5000', 'acme/installer')
 *   // ~/.cache/molt/releases/127.0.0.1_5000_acme_installer-3f0c9a1e.json
 */
export function defaultCachePath(
  env: Readonly<Record<string, string | undefined>>,
  registry: string,
  repository: string,
): string {
  const xdg = env['XDG_CACHE_HOME'];
  const base =
    xdg !== undefined && xdg.startsWith('/') ? xdg : join(env['HOME'] ?? homedir(), '.cache');
  return join(base, 'molt', 'releases', cacheFileName(registry, repository));
}

/**
 * A file name for a registry + repository: readable (only `[a-z0-9._-]`), bounded in length, and
 * suffixed with a hash of the exact key, because sanitising alone maps `a/b_c` and `a_b/c` (or
 * `host:5000` and `host_5000`) to one name and two repositories would overwrite each other.
 */
export function cacheFileName(registry: string, repository: string): string {
  const key = cacheKey(registry, repository);
  const readable = key
    .replace(/[^a-z0-9._-]+/g, '_')
    .replace(/^[._]+/, '')
    .slice(0, 120);
  const hash = createHash('sha256').update(key).digest('hex').slice(0, 8);
  return `${readable}-${hash}.json`;
}
