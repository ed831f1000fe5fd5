// SPDX-License-Identifier: Apache-2.0
export { FileReleaseCache } from './file-cache.ts';
export { InMemoryReleaseCache } from './memory-cache.ts';
export { cacheFileName, defaultCachePath } from './paths.ts';
export { cacheSchemaVersion } from './schema.ts';
export { cacheKey, emptyState } from './types.ts';
export type {
  CacheLoad,
  CacheWarning,
  ImageEntry,
  ReleaseCache,
  RepositoryState,
  SignatureEntry,
} from './types.ts';
