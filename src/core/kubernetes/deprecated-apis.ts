// SPDX-License-Identifier: Apache-2.0
/**
 * Removed APIs still in use, from the API server's own metrics (docs/adr/0012 §4): every request to
 * a deprecated API counts in `apiserver_requested_deprecated_apis{group, version, resource,
 * subresource, removed_release}` (a gauge of 1 per API requested since the server started). The
 * ones whose `removed_release` is at or before the target minor would break their clients after
 * the upgrade (`MOLT_KUBE_REMOVED_API_IN_USE`).
 *
 * A small strict reader of the Prometheus text format (0.0.4) for the one family: the only npm
 * parser (`parse-prometheus-text-format`) has not been released since 2019 and has no types, and
 * core needs no more than sample lines — name, labels with `\\`, `\"` and `\n` escapes, value.
 * A malformed line of the family is an error, never skipped: a check that reads garbage as "no
 * API in use" would let the upgrade break clients.
 */
import { ErrorCode, MoltError } from '../errors.ts';

export const DeprecatedApisMetric = 'apiserver_requested_deprecated_apis';

/** One deprecated API some client requested. */
export interface DeprecatedApi {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly subresource: string;
  /** `1.22`; empty when the API server does not know yet. */
  readonly removedRelease: string;
}

const labelRe = /\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,|$)/y;

function unescape(v: string): string {
  return v.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
}

function malformed(line: string, why: string): MoltError {
  return new MoltError(
    ErrorCode.KubeUnavailable,
    `the API server's metrics are not the Prometheus text format (${why}): ${line.slice(0, 200)}`,
    { hint: 'check that the kubeconfig points at a kube-apiserver' },
  );
}

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  labelRe.lastIndex = 0;
  while (labelRe.lastIndex < text.length) {
    const m = labelRe.exec(text);
    if (m === null) throw malformed(line, 'bad labels');
    labels[m[1] ?? ''] = unescape(m[2] ?? '');
    if (m[3] === '') break;
  }
  return labels;
}

/** One sample line of the family: its labels and value; undefined for another family's line. */
function parseSample(line: string): { labels: Record<string, string>; value: number } | undefined {
  const rest = line.slice(DeprecatedApisMetric.length);
  if (!rest.startsWith('{') && !rest.startsWith(' ')) return undefined; // another family
  const close = rest.lastIndexOf('}');
  if (rest.startsWith('{') && close < 0) throw malformed(line, 'unclosed labels');
  const labels = rest.startsWith('{') ? parseLabels(rest.slice(1, close), line) : {};
  const value =
    rest
      .slice(close + 1)
      .trim()
      .split(/\s+/)[0] ?? '';
  if (value === '' || Number.isNaN(Number(value))) throw malformed(line, 'bad value');
  return { labels, value: Number(value) };
}

/** The family's samples with a value other than 0. */
export function parseDeprecatedApis(exposition: string): DeprecatedApi[] {
  const found: DeprecatedApi[] = [];
  for (const raw of exposition.split('\n')) {
    const line = raw.trim();
    if (!line.startsWith(DeprecatedApisMetric)) continue;
    const sample = parseSample(line);
    if (sample === undefined || sample.value === 0) continue;
    const l = sample.labels;
    found.push({
      group: l['group'] ?? '',
      version: l['version'] ?? '',
      resource: l['resource'] ?? '',
      subresource: l['subresource'] ?? '',
      removedRelease: l['removed_release'] ?? '',
    });
  }
  return found;
}

const minorNum = (release: string): number | undefined => {
  const m = /^1\.(\d+)$/.exec(release);
  return m === null ? undefined : Number(m[1]);
};

/** The APIs in use that a cluster of `targetMinor` (`1.36`) no longer serves. */
export function removedApisInUse(exposition: string, targetMinor: string): DeprecatedApi[] {
  const target = minorNum(targetMinor);
  if (target === undefined) return [];
  return parseDeprecatedApis(exposition).filter((a) => {
    const removed = minorNum(a.removedRelease);
    return removed !== undefined && removed <= target;
  });
}

/** `flowcontrol.apiserver.k8s.io/v1beta2 flowschemas` (the core group as `v1`). */
export const describeApi = (a: DeprecatedApi): string =>
  `${a.group === '' ? '' : `${a.group}/`}${a.version} ${a.resource}${a.subresource === '' ? '' : `/${a.subresource}`} (removed in ${a.removedRelease})`;
