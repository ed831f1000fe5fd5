// SPDX-License-Identifier: Apache-2.0
import {
  emptyState,
  type CacheLoad,
  type CacheWarning,
  type ReleaseCache,
  type RepositoryState,
} from './types.ts';

/**
 * A {@link ReleaseCache} that lives as long as the process: for `--no-cache`, for tests, and for
 * long-running callers (the operator) that poll the same repository repeatedly. States are
 * deep-copied on the way in and out, so a caller mutating what it loaded cannot corrupt the cache
 * (the file cache has the same isolation for free, through JSON).
 */
export class InMemoryReleaseCache implements ReleaseCache {
  readonly #states = new Map<string, string>();

  /** The state saved under `key`, or an empty one. Never warns. */
  load(key: string): Promise<CacheLoad> {
    const json = this.#states.get(key);
    const state = json === undefined ? emptyState() : (JSON.parse(json) as RepositoryState);
    return Promise.resolve({ state, warnings: [] });
  }

  /** Replace the state under `key`. Never warns. */
  save(key: string, state: RepositoryState): Promise<readonly CacheWarning[]> {
    this.#states.set(key, JSON.stringify(state));
    return Promise.resolve([]);
  }
}
