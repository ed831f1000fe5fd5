// SPDX-License-Identifier: Apache-2.0
/**
 * Installer image references as the upgrade API takes them: `host[:port]/repository[:tag][@digest]`.
 * The registry host is required (an agent has no default registry to fall back on), and the whole
 * reference is checked before any request, so a typo is `MOLT_INVALID_REFERENCE`, not a 404.
 */
import { ErrorCode, MoltError } from '../errors.ts';

export interface ImageReference {
  /** `host[:port]`. */
  readonly registry: string;
  readonly repository: string;
  readonly tag?: string;
  readonly digest?: string;
}

const hostPattern =
  /^(?:localhost|[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:.]+\])(?::[0-9]{1,5})?$/;
const repositoryPattern =
  /^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*)*$/;
const tagPattern = /^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$/;
const digestPattern = /^(?:sha256:[a-f0-9]{64}|sha512:[a-f0-9]{128})$/;
const hint =
  'an installer image reference looks like registry.example.com:5000/acme/installer:1.9.0 or …/installer@sha256:<64 hex>';

function bad(image: string, why: string): MoltError {
  return new MoltError(
    ErrorCode.InvalidReference,
    `"${image}" is not a valid image reference: ${why}`,
    { hint },
  );
}

function looksLikeHost(part: string): boolean {
  return part === 'localhost' || part.includes('.') || part.includes(':') || part.startsWith('[');
}

function splitDigest(image: string): { named: string; digest: string | undefined } {
  const at = image.indexOf('@');
  if (at < 0) return { named: image, digest: undefined };
  const digest = image.slice(at + 1);
  if (!digestPattern.test(digest)) throw bad(image, `"${digest}" is not a sha256 or sha512 digest`);
  return { named: image.slice(0, at), digest };
}

function splitRegistry(image: string, named: string): { registry: string; rest: string } {
  const slash = named.indexOf('/');
  const registry = slash < 0 ? '' : named.slice(0, slash);
  if (!looksLikeHost(registry))
    throw bad(image, 'it does not start with a registry host (host[:port]/…)');
  if (!hostPattern.test(registry)) throw bad(image, `"${registry}" is not a host[:port]`);
  return { registry, rest: named.slice(slash + 1) };
}

function splitTag(image: string, rest: string): { repository: string; tag: string | undefined } {
  const colon = rest.lastIndexOf(':');
  const repository = colon < 0 ? rest : rest.slice(0, colon);
  const tag = colon < 0 ? undefined : rest.slice(colon + 1);
  if (!repositoryPattern.test(repository) || repository.length > 255)
    throw bad(image, `"${repository}" is not a repository name`);
  if (tag !== undefined && !tagPattern.test(tag)) throw bad(image, `"${tag}" is not a tag`);
  return { repository, tag };
}

/** Parse and check `image`; throws `MOLT_INVALID_REFERENCE`. A reference without tag or digest means `latest`. */
export function parseImageReference(image: string): ImageReference {
  if (image.length === 0 || image.length > 1024 || /\s/.test(image))
    throw bad(image, 'empty, too long or contains spaces');
  const { named, digest } = splitDigest(image);
  const { registry, rest } = splitRegistry(image, named);
  const { repository, tag } = splitTag(image, rest);
  if (digest !== undefined)
    return { registry, repository, digest, ...(tag !== undefined && { tag }) };
  return { registry, repository, tag: tag ?? 'latest' };
}

/** What to ask the registry for: the digest when there is one, else the tag. */
export function referenceTarget(ref: ImageReference): string {
  return ref.digest ?? ref.tag ?? 'latest';
}
