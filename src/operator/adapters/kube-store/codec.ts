// SPDX-License-Identifier: Apache-2.0
/**
 * Reading a record's data back: the same shapes the etcd store checks (`etcd-store/codec.ts`), so
 * an object edited by hand or cut short is one clear `MOLT_STORE_CORRUPT` naming the object and
 * how to look at it, not a `TypeError` deep in the planner.
 */
import { ErrorCode, isMoltError, MoltError } from '../../../core/errors.ts';
import { decode, type Decoded, type Kind } from '../etcd-store/codec.ts';
import { nameOf, PLURAL, type RecordKind } from './records.ts';

/** `data` of the record (`kind`, `key`) in `namespace`, checked as a `what`. */
export function decodeData<K extends Kind>(
  what: K,
  where: { readonly namespace: string; readonly kind: RecordKind; readonly key: string },
  data: unknown,
): Decoded[K] {
  const name = nameOf(where.kind, where.key);
  try {
    return decode(what, name, JSON.stringify(data ?? null));
  } catch (e) {
    if (!isMoltError(e, ErrorCode.StoreCorrupt)) throw e;
    const why = e.message.slice(e.message.indexOf(`${what}: `) + what.length + 2);
    throw new MoltError(
      ErrorCode.StoreCorrupt,
      `${PLURAL} ${where.namespace}/${name} (${where.kind} ${where.key}) does not hold a valid ${what}: ${why}`,
      {
        cause: e,
        hint: `inspect it with \`kubectl get ${PLURAL} -n ${where.namespace} ${name} -o yaml\`; fix or delete it`,
        details: { namespace: where.namespace, name },
      },
    );
  }
}

/** `data.<field>` as an array (absent: empty), each element checked as a `what`. */
export function decodeList<K extends Kind>(
  what: K,
  where: { readonly namespace: string; readonly kind: RecordKind; readonly key: string },
  data: unknown,
  field: string,
): Decoded[K][] {
  const list = (data as Record<string, unknown> | null | undefined)?.[field] ?? [];
  if (!Array.isArray(list))
    throw new MoltError(
      ErrorCode.StoreCorrupt,
      `${PLURAL} ${where.namespace}/${nameOf(where.kind, where.key)}: data.${field} is not a list`,
    );
  return list.map((item) => decodeData(what, where, item));
}
