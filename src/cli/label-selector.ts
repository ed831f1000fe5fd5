// SPDX-License-Identifier: Apache-2.0
/**
 * `-l zone=a,role!=edge`: kubectl's equality-based label selectors — `key=value` (or `==`),
 * `key!=value` (also true when the label is absent, as in Kubernetes), `key` (has it), `!key`
 * (has it not) — every requirement must hold.
 */
import { ErrorCode, MoltError } from '../protocol/index.ts';

/** One requirement of a selector. */
export type LabelRequirement =
  | { readonly op: 'equals' | 'notEquals'; readonly key: string; readonly value: string }
  | { readonly op: 'exists' | 'notExists'; readonly key: string };

const keyPattern = /^([A-Za-z0-9.-]{1,253}\/)?[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/;
const valuePattern = /^([A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?)?$/;

function bad(selector: string, why: string): MoltError {
  return new MoltError(ErrorCode.BadFlag, `-l ${selector}: ${why}`, {
    hint: 'e.g. -l zone=a,tier!=edge (also key, !key)',
  });
}

function requirement(part: string, selector: string): LabelRequirement {
  const m = /^(!?)([^=!]+)(?:(==|=|!=)(.*))?$/.exec(part.trim());
  if (m === null) throw bad(selector, `cannot read "${part}"`);
  const [, not = '', rawKey = '', op, value = ''] = m;
  const key = rawKey.trim();
  if (!keyPattern.test(key)) throw bad(selector, `"${key}" is not a label key`);
  if (op === undefined) return { op: not === '' ? 'exists' : 'notExists', key };
  if (not !== '') throw bad(selector, `"${part}": use key!=value, not !key=value`);
  const v = value.trim();
  if (!valuePattern.test(v)) throw bad(selector, `"${v}" is not a label value`);
  return { op: op === '!=' ? 'notEquals' : 'equals', key, value: v };
}

/** Parse a selector; MOLT_BAD_FLAG naming it when a part cannot be read. */
export function parseLabelSelector(selector: string): LabelRequirement[] {
  const parts = selector.split(',').filter((p) => p.trim() !== '');
  if (parts.length === 0) throw bad(selector, 'is empty');
  return parts.map((p) => requirement(p, selector));
}

/** Whether `labels` satisfy every requirement. */
export function matchesLabels(
  requirements: readonly LabelRequirement[],
  labels: Readonly<Record<string, string>>,
): boolean {
  return requirements.every((r) => {
    const has = Object.hasOwn(labels, r.key);
    switch (r.op) {
      case 'exists':
        return has;
      case 'notExists':
        return !has;
      case 'equals':
        return has && labels[r.key] === r.value;
      case 'notEquals':
        return !has || labels[r.key] !== r.value;
    }
  });
}
