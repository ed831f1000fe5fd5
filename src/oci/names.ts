// SPDX-License-Identifier: Apache-2.0
import { ErrorCode, MoltError } from '../protocol/index.ts';

const repositoryPattern =
  /^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*)*$/;
const tagPattern = /^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$/;
const digestPattern = /^[a-z0-9]+(?:[+._-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$/;
const sha256Pattern = /^sha256:[a-f0-9]{64}$/;

/** True for a syntactically valid digest (`sha256:` digests must be 64 lower-case hex digits). */
export function isDigest(reference: string): boolean {
  if (!digestPattern.test(reference)) return false;
  return !reference.startsWith('sha256:') || sha256Pattern.test(reference);
}

/** True for a valid tag: `[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}` (no `+`). */
export function isTag(reference: string): boolean {
  return tagPattern.test(reference);
}

/** Reject a repository name outside the distribution grammar before it reaches a URL. */
export function checkRepository(repository: string): void {
  if (!repositoryPattern.test(repository) || repository.length > 255) {
    throw new MoltError(
      ErrorCode.InvalidReference,
      `"${repository}" is not a valid repository name`,
      {
        hint: 'repository names are lower-case a-z, 0-9 and . _ - separated by /, e.g. acme/installer',
      },
    );
  }
}

/** Reject a reference that is neither a tag nor a digest. */
export function checkReference(reference: string): void {
  if (!isTag(reference) && !isDigest(reference)) {
    throw new MoltError(
      ErrorCode.InvalidReference,
      `"${reference}" is neither a valid tag nor a digest`,
      {
        hint: 'tags use [A-Za-z0-9_.-] (no "+"), at most 128 characters; digests look like sha256:<64 hex>',
      },
    );
  }
}

/** Reject anything that is not a digest. */
export function checkDigest(digest: string): void {
  if (!isDigest(digest)) {
    throw new MoltError(ErrorCode.InvalidReference, `"${digest}" is not a valid digest`, {
      hint: 'digests look like sha256:<64 lower-case hex digits>',
    });
  }
}

/** `repo:tag` or `repo@digest`, for messages. */
export function displayReference(repository: string, reference: string): string {
  return isDigest(reference) ? `${repository}@${reference}` : `${repository}:${reference}`;
}
