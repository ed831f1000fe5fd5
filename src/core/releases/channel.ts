// SPDX-License-Identifier: Apache-2.0
/**
 * Channel names. A release may belong to several channels (as Cincinnati releases do,
 * reference/oci-discovery.md §6.5); the label is a comma-separated list. Names are compared
 * case-insensitively — stored lowercased — so `Stable` in a label cannot silently drop a release
 * out of the `stable` channel.
 */
import { ErrorCode, MoltError } from '../errors.ts';

/** A lowercase DNS-label-like word; dots allowed for names such as `stable-4.18`. */
const CHANNEL = /^[a-z0-9](?:[a-z0-9._-]{0,61}[a-z0-9])?$/;

/** Normalises and checks one channel name (`--channel`); throws `MOLT_INVALID_CHANNEL`. */
export function parseChannel(name: string): string {
  const normal = name.trim().toLowerCase();
  if (CHANNEL.test(normal)) return normal;
  throw new MoltError(ErrorCode.InvalidChannel, `"${name}" is not a valid channel name`, {
    hint: 'use lowercase letters, digits, ".", "_" and "-", at most 63 characters, e.g. stable',
  });
}

/**
 * Reads a channels label: split on commas, trimmed, lowercased, de-duplicated in first-seen order;
 * empty items (`stable,`) are ignored. Names that are not valid are returned in `invalid`.
 */
export function parseChannelList(label: string | undefined): {
  readonly channels: readonly string[];
  readonly invalid: readonly string[];
} {
  const items = (label ?? '').split(',').map((c) => c.trim().toLowerCase());
  const named = [...new Set(items.filter((c) => c !== ''))];
  return {
    channels: named.filter((c) => CHANNEL.test(c)),
    invalid: named.filter((c) => !CHANNEL.test(c)),
  };
}
