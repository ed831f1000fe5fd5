// SPDX-License-Identifier: Apache-2.0
// Machines staged ahead of a shut window, as a person sees them (docs/adr/0019): the real
// `molt operator` over two lab workers whose pool stages ahead and whose window opens hours from
// now. Once both hold 1.1.0 staged, `molt rollout status` marks them `Pending (staged)`, and in
// real headless Chromium the dashboard's rollout page and its list of waiting machines say their
// start only reboots. Screenshot: test-artifacts/dashboard-staged.png.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { issueOperatorApiCert } from '../../../src/lab/fleet/operator-pki.ts';
import { official, startLabFleet, type WorkerFleet } from '../../../src/lab/fleet/fleet.ts';
import { writeOperatorFiles } from '../../../src/lab/fleet/operator-files.ts';
import { sha256Hex } from '../../../src/platform/pki/tokens.ts';
import { eventually, type ManagedProcess } from '../../../src/platform/process/managed-process.ts';
import type { RolloutSummaryView } from '../../../src/protocol/operator.ts';
import { moltArgv } from '../../../src/testkit/molt-entry.ts';
import { moltEntry } from '../lab/harness.ts';
import { launchChromium, signInWithToken, startDashboardOperator } from './browser.ts';

const run = promisify(execFile);
const artifacts = join(import.meta.dirname, '../../../test-artifacts');
const token = 'alice-dashboard-token-0123456789';
/** A daily hour-long window opening six hours from now: shut for the whole test. */
const opensAtHour = (new Date().getUTCHours() + 6) % 24;
let fleet: WorkerFleet;
let operator: ManagedProcess;
let browser: Browser;
let page: Page;
let api = '';
let url = '';

before(async () => {
  fleet = await startLabFleet({ molt: moltArgv, workers: 2, controlPlane: false });
  const config = await writeOperatorFiles(fleet, {
    pools: [
      {
        name: 'workers',
        channel: 'beta',
        stage: { ahead: true, concurrency: 2 },
        policies: [
          { window: { windows: [{ cron: `0 ${String(opensAtHour)} * * *`, duration: '1h' }] } },
        ],
      },
    ],
    config: {
      pki: await issueOperatorApiCert(fleet.pki.dir),
      listen: { host: '127.0.0.1', port: 0 },
      dashboard: {
        listen: { host: '127.0.0.1', port: 0 },
        users: [{ name: 'alice', role: 'operator', tokenSha256: sha256Hex(token) }],
      },
    },
  });
  const starting = 180_000;
  ({ process: operator, api, url } = await startDashboardOperator(config, starting));
  browser = await launchChromium(starting);
  page = await browser.newPage({ viewport: { width: 1300, height: 900 } });
  await mkdir(artifacts, { recursive: true });
});

after(async () => {
  await (browser as Browser | undefined)?.close();
  await (operator as ManagedProcess | undefined)?.stop(10_000);
  await (fleet as WorkerFleet | undefined)?.stop();
});

/** `molt rollout …` against the operator API with the operator's certificate; its stdout. */
async function molt(...args: string[]): Promise<string> {
  const pki = fleet.pki.dir;
  const { stdout } = await run(process.execPath, [
    ...[moltEntry, 'rollout', ...args, '--endpoint', api],
    ...['--cert', join(pki, 'operator.pem'), '--key', join(pki, 'operator.key')],
    ...['--ca', join(pki, 'ca.pem')],
  ]);
  return stdout;
}

describe('machines staged ahead of a shut window, as a person sees them', () => {
  it('marks them staged in molt rollout status and on the dashboard, and nothing rebooted', async () => {
    await fleet.publish('1.1.0', { ...official, 'dev.molt.channels': 'beta' });
    const id = await eventually(
      async () => {
        for (const w of fleet.workers) assert.equal((await w.status()).phase, 'Staged', w.id);
        const list = JSON.parse(await molt('list', '-o', 'json')) as RolloutSummaryView[];
        const r = list.find((x) => x.target.version === '1.1.0');
        assert.ok(r !== undefined, 'no rollout to 1.1.0 yet');
        return r.id;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    // The operator marks a machine once it has observed its agent Staged: its next pass.
    const text = await eventually(
      async () => {
        const out = await molt('status', id);
        assert.match(out, /^w-1 +Pending \(staged\) +wait /m, out);
        assert.match(out, /^w-2 +Pending \(staged\) +wait /m, out);
        return out;
      },
      { timeoutMs: 20_000, intervalMs: 500 },
    );
    assert.match(text, /^progress: 0\/2 machines done \(0 in flight, 0 failed, 2 pending\)$/m);

    await page.goto(url);
    await signInWithToken(page, token);
    const waiting = page.locator('[data-waiting] >> text=staged: its start only reboots');
    await waiting.nth(1).waitFor({ timeout: 20_000 });
    assert.equal(await waiting.count(), 2);

    await page.goto(`${url}#/rollout/${id}`);
    const marks = page.locator('#rollout-machines tbody tr[data-phase="Pending"] [data-staged]');
    await marks.nth(1).waitFor({ timeout: 20_000 });
    assert.equal(await marks.count(), 2);
    assert.match(await marks.first().innerText(), /staged: its start only reboots/);
    const w1 = await page.locator('#rollout-machines tbody tr[data-machine="w-1"]').innerText();
    const op = (await fleet.workers[0]?.status())?.operation?.id ?? 'none';
    assert.ok(w1.includes(op), `the row shows the staged operation ${op}: ${w1}`);
    await page.screenshot({ path: join(artifacts, 'dashboard-staged.png'), fullPage: true });

    for (const w of fleet.workers) {
      const s = await w.status();
      assert.equal(s.version, '1.0.0', `${w.id} still runs 1.0.0`);
      assert.equal(s.boot.oneShot, null, `${w.id}: nothing armed`);
    }
  });
});
