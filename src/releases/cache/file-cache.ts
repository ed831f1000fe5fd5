// SPDX-License-Identifier: Apache-2.0
import { readFile } from 'node:fs/promises';
import { ErrorCode, errorMessage } from '../../core/errors.ts';
import { writeFileAtomic } from './atomic-write.ts';
import { cacheFileSchema, cacheSchemaVersion, emptyCacheFile, type CacheFile } from './schema.ts';
import {
  emptyState,
  type CacheLoad,
  type CacheWarning,
  type ReleaseCache,
  type RepositoryState,
} from './types.ts';

/**
 * A {@link ReleaseCache} in one JSON file (versioned, zod-validated, written atomically). One file
 * may hold several repositories (a shared `--cache` file); the default is one file per registry and
 * repository ({@link defaultCachePath}). A missing file is an empty cache; an unreadable, corrupt
 * or foreign-version file is reported as a warning and rebuilt by the next save — never fatal.
 *
 * Concurrent saves by two processes are last-writer-wins per file: both files are complete and
 * valid, and the loser's entries are simply fetched again on its next scan.
 */
export class FileReleaseCache implements ReleaseCache {
  /** Where the cache lives. */
  readonly path: string;

  constructor(path: string) {
    this.path = path;
  }

  /** The state stored under `key` (empty when absent), with warnings for a bad file. */
  async load(key: string): Promise<CacheLoad> {
    const { file, warnings } = await this.#read();
    return { state: file.repositories[key] ?? emptyState(), warnings };
  }

  /** Re-read the file, replace `key`'s state and write the file back atomically. */
  async save(key: string, state: RepositoryState): Promise<readonly CacheWarning[]> {
    // Re-read rather than reuse what load() saw: another repository may have been saved meanwhile.
    const { file } = await this.#read();
    const next: CacheFile = { ...file, repositories: { ...file.repositories, [key]: state } };
    try {
      await writeFileAtomic(this.path, `${JSON.stringify(next)}\n`);
      return [];
    } catch (e) {
      return [
        {
          code: ErrorCode.CacheUnavailable,
          message: `cannot write release cache ${this.path}: ${errorMessage(e)}`,
        },
      ];
    }
  }

  async #read(): Promise<{ file: CacheFile; warnings: CacheWarning[] }> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (e) {
      if (isNotFound(e)) return { file: emptyCacheFile(), warnings: [] };
      const message = `cannot read release cache ${this.path}: ${errorMessage(e)}; continuing without it`;
      return { file: emptyCacheFile(), warnings: [{ code: ErrorCode.CacheUnavailable, message }] };
    }
    const problem = validate(text);
    if (typeof problem === 'string') {
      const message = `release cache ${this.path} is ${problem}; it will be rebuilt`;
      return { file: emptyCacheFile(), warnings: [{ code: ErrorCode.CacheCorrupt, message }] };
    }
    return { file: problem, warnings: [] };
  }
}

/** The parsed file, or a phrase saying what is wrong with it. */
function validate(text: string): CacheFile | string {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return 'not valid JSON';
  }
  const version =
    typeof json === 'object' && json !== null
      ? (json as Record<string, unknown>)['version']
      : undefined;
  if (typeof version === 'number' && version !== cacheSchemaVersion) {
    return `schema version ${version}, this molt uses ${cacheSchemaVersion}`;
  }
  const parsed = cacheFileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return `not a molt release cache (${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'})`;
  }
  // zod's optional fields are typed `T | undefined`; JSON never holds an explicit undefined.
  return parsed.data as CacheFile;
}

function isNotFound(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 'ENOENT';
}
