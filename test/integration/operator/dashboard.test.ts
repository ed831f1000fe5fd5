// SPDX-License-Identifier: Apache-2.0
// The dashboard (issue 6) in real headless Chromium (Debian's, driven by playwright-core) against
// the real `molt operator` over a six-machine lab fleet: while release 1.1.0 rolls out, the page
// shows the fleet grid, the rollouts progressing, the timeline (with the workers' window shaded)
// and the live event log; its listener refuses writes. Screenshots go to test-artifacts/.
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { OperatorDashboardPrefix } from '../../../src/protocol/operator.ts';
import {
  startProcess,
  type ManagedProcess,
} from '../../../src/platform/process/managed-process.ts';
import { moltEntry } from '../lab/harness.ts';
import { official, startLabFleet, type LabFleet } from '../../../src/lab/fleet/fleet.ts';
import { writeOperatorFiles } from '../../../src/lab/fleet/operator-files.ts';
import { moltArgv } from '../../../src/testkit/molt-entry.ts';

const artifacts = join(import.meta.dirname, '../../../test-artifacts');
let fleet: LabFleet;
let operator: ManagedProcess;
let browser: Browser;
let page: Page;
let url: string;

async function writeConfig(): Promise<string> {
  return writeOperatorFiles(fleet, {
    pools: [
      { name: 'control-plane', channel: 'stable', policies: [{ concurrency: 1 }] },
      {
        name: 'workers',
        channel: 'stable',
        policies: [
          { canary: { count: 1, soak: '2s' } },
          { concurrency: 1 },
          // Open around the clock (every hour for an hour): the timeline shades it behind workers.
          { window: { windows: [{ cron: '0 * * * *', duration: '1h' }] } },
        ],
      },
    ],
    config: { dashboard: { listen: { host: '127.0.0.1', port: 0 } } },
  });
}

/** Wait until the page has at least `n` elements matching `selector` (it re-renders as it goes). */
async function atLeast(selector: string, n: number, timeout: number): Promise<void> {
  await page
    .locator(selector)
    .nth(n - 1)
    .waitFor({ state: 'attached', timeout });
}

before(async () => {
  fleet = await startLabFleet({ molt: moltArgv, workers: 3 });
  operator = startProcess('molt operator', process.execPath, [
    moltEntry,
    'operator',
    '--config',
    await writeConfig(),
  ]);
  const line = await operator.waitFor(new RegExp(`${OperatorDashboardPrefix}(\\S+)`), 60_000);
  url = line[1] ?? '';
  await operator.waitFor(/leading as/, 60_000);
  browser = await chromium.launch({
    executablePath: process.env['MOLT_CHROMIUM'] ?? '/usr/bin/chromium',
    // Root has no user namespaces for Chromium's sandbox here; the page is our own.
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
  page = await browser.newPage({ viewport: { width: 1400, height: 1100 } });
  await mkdir(artifacts, { recursive: true });
});

after(async () => {
  // Each is undefined when `before` failed before starting it.
  await (browser as Browser | undefined)?.close();
  await (operator as ManagedProcess | undefined)?.stop(10_000);
  await (fleet as LabFleet | undefined)?.stop();
});

describe('the dashboard in a real browser', () => {
  it('shows every machine of the fleet with its slots and health', async () => {
    await page.goto(url);
    await atLeast('#fleet tbody tr[data-version="1.0.0"]', 6, 30_000);
    const rows = await page.locator('#fleet tbody tr').allInnerTexts();
    assert.equal(rows.length, 6);
    assert.ok(
      rows.every((r) => /1\.0\.0 ● booted ★/.test(r)),
      rows.join('\n'),
    );
    assert.ok(rows.every((r) => /healthy/.test(r)));
    assert.match(await page.locator('#leader').innerText(), /leader/);
  });

  it('shows the rollout progressing live: cards, timeline and event log', async () => {
    await fleet.publish('1.1.0', { ...official, 'dev.molt.channels': 'stable' });
    // The control plane goes first; once one of its machines is done and the next is moving,
    // the page must show it without a reload.
    await atLeast('[data-rollout^="control-plane-1.1.0"]:not([data-succeeded="0"])', 1, 120_000);
    await atLeast('#events li', 3, 30_000);
    const events = await page.locator('#events li').allInnerTexts();
    assert.ok(
      events.some((e) => /cp-\d/.test(e)),
      events.join('\n'),
    );
    const rows = Number(await page.locator('#timeline svg').getAttribute('data-rows'));
    assert.ok(rows >= 2, `the timeline shows the machines started so far (${String(rows)})`);
    await page.screenshot({ path: join(artifacts, 'dashboard-rollout.png'), fullPage: true });

    await atLeast('[data-rollout*="-1.1.0-"][data-state="Completed"]', 2, 300_000);
    await atLeast('#fleet tbody tr[data-version="1.1.0"]', 6, 30_000);
    await page.screenshot({ path: join(artifacts, 'dashboard-complete.png'), fullPage: true });
    const text = await page.locator('#fleet').innerText();
    assert.equal(text.match(/1\.1\.0 ● booted ★/g)?.length, 6, text);
    assert.ok(
      (await page.locator('#timeline rect.window[data-window="workers"]').count()) >= 3,
      'the workers’ window is shaded behind each worker',
    );
    assert.equal(
      await page.locator('#timeline rect.window[data-window="control-plane"]').count(),
      0,
      'the control plane has no window policy: nothing shaded',
    );
  });

  it('refuses writes on its listener', async () => {
    const target = new URL('/v1/rollouts/x/pause', url);
    const res = await fetch(target, { method: 'POST', body: '{}' });
    assert.equal(res.status, 403);
    assert.match(await res.text(), /MOLT_FORBIDDEN/);
  });
});
