// SPDX-License-Identifier: Apache-2.0
// The monitoring assets shipped in deploy/monitoring (docs/adr/0009): every metric the Grafana
// dashboard and the Prometheus alerts name is one the operator's GET /metrics really serves (a
// scrape of the API, not a list kept by hand), and the alert rules are well formed. With
// promtool installed (Debian: prometheus), the rules are also checked and unit-tested by it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { scrapeFixtureMetrics } from '../../testkit/metrics-scrape.ts';

const root = join(import.meta.dirname, '../../..');
const alertsFile = join(root, 'deploy/monitoring/alerts.yaml');
const dashboardFile = join(root, 'deploy/monitoring/grafana-dashboard.json');

/** PromQL words that are not metric names. */
const keywords = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan', 'Inf', 'NaN']);

/**
 * The metric names a PromQL expression selects: identifiers left once strings, label matchers,
 * ranges, grouping clauses and Grafana variables are removed, that are neither keywords nor
 * function calls.
 */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\$\{?\w+\}?/g, ' ');
  const names = [...bare.matchAll(/(?<![\w.])([a-zA-Z_:][\w:]*)(?![\w:])(?!\s*\()/g)].map(
    (m) => m[1] ?? '',
  );
  return [...new Set(names.filter((n) => !keywords.has(n)))];
}

interface Panel {
  readonly type: string;
  readonly id: number;
  readonly title: string;
  readonly gridPos: { x: number; y: number; w: number; h: number };
  readonly datasource?: { uid?: string };
  readonly targets?: { expr?: string; refId?: string }[];
}

interface Dashboard {
  readonly uid: string;
  readonly panels: Panel[];
  readonly templating: {
    list: { name: string; type: string; query?: string | { query: string } }[];
  };
}

/** Every PromQL expression of the dashboard: its panels' targets and its variables' queries. */
function dashboardExprs(d: Dashboard): { where: string; expr: string }[] {
  const targets = d.panels.flatMap((p) =>
    (p.targets ?? []).map((t) => ({ where: `panel "${p.title}"`, expr: t.expr ?? '' })),
  );
  const variables = d.templating.list
    .filter((v) => v.type === 'query')
    .map((v) => {
      const q = typeof v.query === 'string' ? v.query : (v.query?.query ?? '');
      // label_values(metric, label): the metric is the selector, the label is not a metric.
      const m = /^label_values\((.*),\s*\w+\)$/.exec(q);
      return { where: `variable $${v.name}`, expr: m?.[1] ?? q };
    });
  return [...targets, ...variables];
}

interface Rule {
  readonly alert?: unknown;
  readonly expr?: unknown;
  readonly for?: unknown;
  readonly labels?: Record<string, unknown>;
  readonly annotations?: Record<string, unknown>;
}

const ruleKeys = new Set(['alert', 'expr', 'for', 'keep_firing_for', 'labels', 'annotations']);
const promDuration = /^(?:\d+(?:ms|[smhdwy]))+$/;

async function hasPromtool(): Promise<boolean> {
  try {
    await promisify(execFile)('promtool', ['--version']);
    return true;
  } catch {
    return false;
  }
}

describe('the monitoring assets in deploy/monitoring', () => {
  let exposed: Set<string>;
  let rules: Rule[];
  let dashboard: Dashboard;
  before(async () => {
    const text = await scrapeFixtureMetrics();
    exposed = new Set(
      text
        .split('\n')
        .filter((l) => l !== '' && !l.startsWith('#'))
        .map((l) => /^[a-zA-Z_:][\w:]*/.exec(l)?.[0] ?? ''),
    );
    const alerts = parse(await readFile(alertsFile, 'utf8')) as { groups: { rules: Rule[] }[] };
    rules = alerts.groups.flatMap((g) => g.rules);
    dashboard = JSON.parse(await readFile(dashboardFile, 'utf8')) as Dashboard;
  });

  it('finds the metric names of a PromQL expression, and only those', () => {
    assert.deepEqual(
      metricNames(
        'sum by (pool) (rate(a_total{x="b c",y=~"$pool"}[5m])) / on (instance) group_left (z) b > 1e3 and ignoring(q) c offset 5m unless vector(0) or histogram_quantile(0.9, d_bucket)',
      ),
      ['a_total', 'b', 'c', 'd_bucket'],
    );
  });

  it('alerts name only metrics the operator exposes', () => {
    assert.ok(exposed.size > 15, `the scrape exposes ${String(exposed.size)} names`);
    for (const r of rules)
      for (const name of metricNames(String(r.expr)))
        assert.ok(exposed.has(name), `alert ${String(r.alert)} uses ${name}, not exposed`);
  });

  it('the dashboard names only metrics the operator exposes', () => {
    const exprs = dashboardExprs(dashboard);
    assert.ok(exprs.length > 20);
    for (const { where, expr } of exprs) {
      assert.ok(metricNames(expr).length > 0, `${where}: no metric in ${expr}`);
      for (const name of metricNames(expr))
        assert.ok(exposed.has(name), `${where} uses ${name}, not exposed`);
    }
  });

  it('alert rules are well formed: name, expression, duration, severity, summary and description', () => {
    assert.ok(rules.length >= 10);
    const names = rules.map((r) => r.alert);
    assert.equal(new Set(names).size, names.length, 'alert names are unique');
    for (const r of rules) {
      const what = `alert ${String(r.alert)}`;
      assert.match(String(r.alert), /^Molt[A-Z]\w+$/, what);
      assert.deepEqual(
        Object.keys(r).filter((k) => !ruleKeys.has(k)),
        [],
        `${what}: unknown keys`,
      );
      assert.ok(typeof r.expr === 'string' && r.expr.trim() !== '', `${what}: expr`);
      if (r.for !== undefined)
        assert.ok(typeof r.for === 'string' && promDuration.test(r.for), `${what}: for`);
      assert.ok(['critical', 'warning', 'info'].includes(String(r.labels?.['severity'])), what);
      for (const a of ['summary', 'description'])
        assert.ok(typeof r.annotations?.[a] === 'string', `${what}: annotations.${a}`);
    }
  });

  it('the dashboard is importable: unique panel ids, on the 24-column grid, on its datasource variable', () => {
    const ids = dashboard.panels.map((p) => p.id);
    assert.equal(new Set(ids).size, ids.length);
    assert.ok(dashboard.templating.list.some((v) => v.type === 'datasource'));
    for (const p of dashboard.panels) {
      assert.ok(p.gridPos.x >= 0 && p.gridPos.x + p.gridPos.w <= 24, `panel ${p.title}`);
      if (p.type !== 'row') assert.equal(p.datasource?.uid, '${datasource}', `panel ${p.title}`);
    }
  });

  it('promtool accepts the rules and its unit tests of them pass', async (t) => {
    if (!(await hasPromtool())) {
      t.skip('promtool is not installed (Debian: apt install prometheus)');
      return;
    }
    const run = promisify(execFile);
    await run('promtool', ['check', 'rules', alertsFile]);
    await run('promtool', ['test', 'rules', join(root, 'test/monitoring/alerts-promtool.yaml')]);
  });
});
