// SPDX-License-Identifier: Apache-2.0
/** The table of `molt images list`: one row per followed workload, then conflicts and empty policies. */
import type {
  ImageDecisionView,
  ImagePolicyView,
  ImageUnitView,
  ImagesView,
  PrintColumn,
} from '../../../protocol/index.ts';
import { renderTable } from '../../output.ts';

interface Row {
  readonly policy: string;
  readonly unit: ImageUnitView;
}

/** `sha256:abcd1234…` → its algorithm and the first `n` hex digits (with `…` when cut). */
export function shortDigest(digest: string, n: number, ellipsis = true): string {
  const [algo, hex = ''] = digest.split(':');
  return hex.length <= n ? digest : `${algo ?? ''}:${hex.slice(0, n)}${ellipsis ? '…' : ''}`;
}

/** `host/acme/web:1.8.0-rev2@sha256:…` → `acme/web:1.8.0-rev2@sha256:abcd1234…` (the host dropped). */
export function shortImage(image: string): string {
  const at = image.indexOf('@');
  const named = at < 0 ? image : image.slice(0, at);
  const slash = named.indexOf('/');
  const path = slash < 0 ? named : named.slice(slash + 1);
  return at < 0 ? path : `${path}@${shortDigest(image.slice(at + 1), 8)}`;
}

/** `=` current, `→ tag@digest12` move, `wait: reason`, `skip: reason`. */
export function nextText(d: ImageDecisionView): string {
  switch (d.kind) {
    case 'current':
      return '=';
    case 'move':
      return `→ ${d.tag ?? '?'}@${shortDigest(d.digest ?? '', 12, false)}`;
    case 'wait':
    case 'skip':
      return `${d.kind}: ${d.reason ?? ''}`;
  }
}

/** ` (img-… Active)`: the move's image rollout; a refused one (halted, cancelled, rolled back) says so. */
export function rolloutNote(u: ImagePolicyView['units'][number]): string {
  const r = u.rollout;
  if (r === undefined) return '';
  // `refused` is said by the operator; an older one said only the state.
  const judged = r.refused === true || ['Halted', 'Cancelled', 'Superseded'].includes(r.state);
  const refused = !judged
    ? ''
    : r.state === 'Completed'
      ? ', rolled back: not offered again'
      : ', not offered again';
  return ` (${r.id} ${r.state}${refused})`;
}

const columns: readonly PrintColumn<Row>[] = [
  { header: 'POLICY', value: (r) => r.policy },
  { header: 'WORKLOAD', value: (r) => r.unit.id },
  { header: 'CONTAINER(S)', value: (r) => r.unit.containers.join(',') },
  { header: 'IMAGE', value: (r) => shortImage(r.unit.image) },
  { header: 'AVAILABLE', value: (r) => (r.unit.available ? 'yes' : 'no') },
  { header: 'NEXT', value: (r) => nextText(r.unit.decision) + rolloutNote(r.unit) },
];

/** What the table cannot say: conflicts (once each), policies that select nothing, failed scans. */
function notes(policies: readonly ImagePolicyView[]): string[] {
  const conflicts = new Map<string, string>();
  for (const p of policies)
    for (const c of p.conflicts)
      conflicts.set(
        `${c.unit}/${c.container}`,
        `conflict: container ${c.container} of ${c.unit} is selected by ${c.policies.join(' and ')}: neither follows it`,
      );
  return [
    ...conflicts.values(),
    ...policies.filter((p) => p.empty).map((p) => `policy ${p.name} selects no container`),
    ...policies.flatMap((p) =>
      p.scan?.error === undefined ? [] : [`policy ${p.name}: ${p.repository}: ${p.scan.error}`],
    ),
  ];
}

/** `molt images list` as a table. */
export function describeImages(v: ImagesView): string {
  if (v.policies.length === 0) return 'no image policies\n';
  const rows = v.policies.flatMap((p) => p.units.map((unit) => ({ policy: p.name, unit })));
  const table = rows.length === 0 ? 'no followed container\n' : renderTable(columns, rows);
  return (
    table +
    notes(v.policies)
      .map((n) => `${n}\n`)
      .join('')
  );
}
