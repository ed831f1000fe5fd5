// SPDX-License-Identifier: Apache-2.0
/**
 * What the Kubernetes store's records are called (docs/adr/0016): the OperatorRecord resource,
 * the kinds of record, and each record's object name — `<kind>.<key made DNS-safe>.<hash of kind
 * and key>`: readable in `kubectl get operatorrecords`, and distinct for keys that differ only in
 * case or in characters a name cannot hold (the hash). The key itself is kept in `spec.key`.
 */
import { createHash } from 'node:crypto';
import { apiStatusOf, statusOf } from '../../../platform/kube/client.ts';
import { MoltGroup, MoltVersion, OperatorRecordKinds } from '../../../protocol/kube-resources.ts';

export const GROUP = MoltGroup;
export const VERSION = MoltVersion;
export const PLURAL = 'operatorrecords';
/** The label every record carries: its kind, so one list selects the kinds a read needs. */
export const KIND_LABEL = 'molt.dev/record';

export const RecordKinds = OperatorRecordKinds;
export type RecordKind = (typeof RecordKinds)[number];

/**
 * The most one record's JSON may take. etcd refuses a value past 1.5 MiB (its default request
 * limit) and the API server stores a custom object as JSON with its metadata, so one MiB leaves
 * room for both; a write past it is refused here with a message naming the record.
 */
export const MAX_RECORD_BYTES = 1024 * 1024;

/** The object as the API hands it back (only what the store reads). */
export interface RecordObject {
  metadata?: { name?: string; resourceVersion?: string };
  spec?: { kind?: string; key?: string; data?: unknown };
}

export function nameOf(kind: RecordKind, key: string): string {
  const readable =
    key
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 180)
      .replace(/-+$/, '') || 'x';
  const hash = createHash('sha256').update(`${kind}\u0000${key}`).digest('hex').slice(0, 12);
  return `${kind}.${readable}.${hash}`;
}

/** The kind and key of an object molt wrote: its name must be the one they make. */
export function recordOf(obj: RecordObject): { kind: RecordKind; key: string } | undefined {
  const kind = obj.spec?.kind as RecordKind | undefined;
  const key = obj.spec?.key;
  if (kind === undefined || !RecordKinds.includes(kind) || typeof key !== 'string')
    return undefined;
  return nameOf(kind, key) === obj.metadata?.name ? { kind, key } : undefined;
}

/** A 404 about one named object (it is absent), not about a missing resource type or namespace. */
export function missingObject(e: unknown): boolean {
  if (statusOf(e) !== 404) return false;
  const details = apiStatusOf(e)?.details;
  return details?.name !== undefined && details.kind === PLURAL;
}
