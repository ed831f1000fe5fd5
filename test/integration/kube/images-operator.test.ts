// SPDX-License-Identifier: Apache-2.0
// Image policies through the real `molt operator` process (docs/adr/0013 decision 9): its image driver,
// run by the leader's reconcile pass, follows a rebuild pushed to the real registry and writes the
// new digest into real Deployments on a real control plane as molt-operator under the shipped RBAC
// — the canary first, the rest after its soak — and records the rollout, its units' changes and
// their starts where `molt rollout` reads them. (Deployments of 0 replicas: no kubelet here; the
// lab kubelet's readiness is `images-rollout.test.ts`'s.) The dashboard's page of that rollout,
// in real headless Chromium, lists its workloads and each one's change.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';
import { stringify } from 'yaml';
import { createRegistryClient, pushImage } from '../../../src/oci/index.ts';
import { eventually } from '../../../src/platform/process/managed-process.ts';
import {
  HistoryEventView,
  RolloutSummaryView,
  RolloutView,
} from '../../../src/protocol/operator.ts';
import { rebuildOf, repositoryName, startP12Rig, type P12Rig } from './images-operator-rig.ts';

const exec = promisify(execFile);
const SOAK_MS = 4_000;
const TOKEN = 'alice-dashboard-token-0123456789';
const artifacts = join(import.meta.dirname, '../../../test-artifacts');
let rig: P12Rig;
let rolloutId: string | undefined;

describe('image rollouts through the molt operator process', () => {
  before(async () => {
    rig = await startP12Rig({
      repositories: 1,
      perRepository: 3,
      namespaces: 2,
      policy: { canary: { workloads: ['app-00-0'], soak: `${String(SOAK_MS / 1000)}s` } },
      dashboardToken: TOKEN,
      declared: true,
    });
  });
  after(async () => {
    await rig.stop();
  });

  it('moves a pushed rebuild to the canary, then to the rest after its soak, and records it', async () => {
    await eventually(
      async () => {
        const units = (await rig.images()).policies.flatMap((p) => p.units);
        assert.equal(units.length, 3);
        assert.ok(units.every((u) => u.decision.kind === 'current' && u.available));
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    const client = createRegistryClient({ registry: rig.registry.host, insecure: true });
    const b2 = await pushImage(
      client,
      repositoryName(0),
      ['1.0.0', '1.0.0-rev1', '1.0.0-rev1-b2'],
      rebuildOf(0, 2),
    ).finally(() => client.close());
    const target = `${rig.repository(0)}:1.0.0-rev1@${b2}`;
    await eventually(
      async () => {
        const images = (await rig.deployments(0)).map(
          (d) => d.spec?.template.spec?.containers[0]?.image,
        );
        assert.deepEqual(images, [target, target, target]);
      },
      { timeoutMs: 90_000, intervalMs: 250 },
    );
    const id = await eventually(
      async () => {
        const list = RolloutSummaryView.array().parse(await rig.get('/v1/rollouts'));
        assert.equal(list.length, 1);
        const [r] = list;
        assert.equal(r?.state, 'Completed');
        return r.id;
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    rolloutId = id;
    const r = RolloutView.parse(await rig.get(`/v1/rollouts/${id}`));
    assert.equal(r.pool, 'app-00/1.0.0-rev1');
    assert.deepEqual(r.target, { version: '1.0.0-rev1', digest: b2 });
    assert.deepEqual([r.counts.total, r.counts.Succeeded], [3, 3]);
    const at = (unit: string, k: 'startedAt' | 'finishedAt'): number =>
      Date.parse(r.machines.find((m) => m.machine.endsWith(`/${unit}`))?.[k] ?? '');
    const canaryDone = at('app-00-0', 'finishedAt');
    for (const other of ['app-00-1', 'app-00-2'])
      assert.ok(
        at(other, 'startedAt') >= canaryDone + SOAK_MS,
        `${other} started ${String(at(other, 'startedAt') - canaryDone)} ms after the canary finished`,
      );
    const history = HistoryEventView.array().parse(
      await rig.get(`/v1/history?rollout=${encodeURIComponent(id)}`),
    );
    const starts = history.filter((e) => e.kind === 'machine-start');
    assert.equal(starts.length, 3, JSON.stringify(history));
    assert.match(starts[0]?.message ?? '', /app-00-0: moving app → .*1\.0\.0-rev1@sha256:/);
  });
  it('shows the image rollout on the dashboard: its workloads and the change of each', async () => {
    assert.ok(rolloutId !== undefined && rig.dashboard !== undefined, 'the rollout ran first');
    const browser = await chromium.launch({
      executablePath: process.env['MOLT_CHROMIUM'] ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-dev-shm-usage'],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      await page.goto(new URL(`/#/rollout/${encodeURIComponent(rolloutId)}`, rig.dashboard).href);
      await page.fill('#login-token', TOKEN);
      await page.click('#login-form button[type="submit"]');
      const rows = page.locator('#rollout-machines tbody tr');
      await rows.nth(2).waitFor({ state: 'attached', timeout: 20_000 });
      assert.equal(await page.locator('#rollout-body h3').first().textContent(), 'Workloads');
      const first = await rows.first().locator('td').allTextContents();
      assert.match(first[0] ?? '', /^Deployment\/bench-\d\/app-00-\d$/);
      assert.equal(first[1], 'Succeeded');
      assert.match(first[6] ?? '', /^app: sha256:[0-9a-f]{12} → sha256:[0-9a-f]{12}$/);
      assert.equal(await rows.first().locator('td a').count(), 0, 'a workload has no machine page');
      await page
        .locator('#rollout-body .timeline text title')
        .nth(2)
        .waitFor({ state: 'attached', timeout: 20_000 });
      const labels = await page.locator('#rollout-body .timeline text title').allTextContents();
      assert.ok(
        // The wave follows once the machine's decision is recorded: `canary` or `batch N`.
        labels.some((t) =>
          /^Deployment\/bench-\d\/app-00-\d · 1\.0\.0-rev1(?: · (?:canary|batch \d+))?$/.test(t),
        ),
        labels.join('\n'),
      );
      assert.equal(
        await page.locator('#rollout-body .timeline a').count(),
        0,
        'nor a link in the timeline',
      );
      await mkdir(artifacts, { recursive: true });
      await page.screenshot({ path: join(artifacts, 'image-rollout.png'), fullPage: true });
    } finally {
      await browser.close();
    }
  });

  it('says on ImagePolicy objects what they follow, and that one naming no workload selects nothing', async () => {
    const kubectl = async (args: readonly string[], input?: string): Promise<string> => {
      const child = exec(join(rig.cp.bins, 'kubectl'), [
        ...['--kubeconfig', rig.cp.admin.kubeconfig],
        ...args,
      ]);
      child.child.stdin?.end(input ?? '');
      return (await child).stdout;
    };
    const object = (name: string, workloads: object) =>
      stringify({
        apiVersion: 'molt.dev/v1alpha1',
        kind: 'ImagePolicy',
        metadata: { name, namespace: 'molt-system' },
        spec: { repository: rig.repository(0), follow: 'rebuilds', workloads: [workloads] },
      });
    // `extra` follows a Deployment the fleet file's policy does not (another label).
    await kubectl(['create', 'namespace', 'extra']);
    await kubectl(
      ['create', 'deployment', 'web', '-n', 'extra', '--replicas=0'].concat(
        `--image=${rig.repository(0)}:1.0.0-rev1@${rig.digests[0] ?? ''}`,
      ),
    );
    await kubectl(['apply', '-f', '-'], object('extra', { namespaces: ['extra'] }));
    await kubectl(['apply', '-f', '-'], object('nowhere', { namespaces: ['nowhere'] }));
    const table = await eventually(
      async () => {
        const out = await kubectl(['get', 'imagepolicies', '-n', 'molt-system']);
        assert.match(out, /^extra\s.*\sAccepted\s+Selected\s/m, out);
        assert.match(out, /^nowhere\s.*\sAccepted\s+SelectsNothing\s/m, out);
        return out;
      },
      { timeoutMs: 60_000, intervalMs: 1_000 },
    );
    assert.match(table, /FOLLOWING/);
    const message = await kubectl([
      ...['get', 'imagepolicy', 'nowhere', '-n', 'molt-system', '-o'],
      "jsonpath={.status.conditions[?(@.type=='Following')].message}",
    ]);
    assert.match(
      message,
      /^no container of the workloads it names runs 127\.0\.0\.1:\d+\/bench\/app-00/,
    );
  });
});
