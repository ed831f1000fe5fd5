// SPDX-License-Identifier: Apache-2.0
// The dashboard (17) in real headless Chromium (Debian's, driven by playwright-core)
// against the real `molt operator` over a six-machine lab fleet. Reads need a sign-in: an anonymous
// visitor gets the sign-in page and 401s; a viewer sees the fleet from the first paint (the state
// is in the page) but cannot act; an operator pauses and resumes a rollout from its card — which
// `molt rollout status` then shows, recorded as dashboard:alice — while release 1.1.0 rolls out;
// machines that reboot are shown rebooting, not unreachable; the rollout and machine pages, the
// filters, machines per release and the timeline's ticks follow; the releases and pools page shows
// each pool's rules and lifts a block. Screenshots go to test-artifacts/.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, afterEach, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { Agent, fetch as mtlsFetch } from 'undici';
import { issueOperatorApiCert } from '../../../src/lab/fleet/operator-pki.ts';
import { sha256Hex } from '../../../src/platform/pki/tokens.ts';
import type { DashboardStateView } from '../../../src/protocol/dashboard.ts';
import { type HistoryEventView, type RolloutView } from '../../../src/protocol/operator.ts';
import { type ManagedProcess } from '../../../src/platform/process/managed-process.ts';
import { moltEntry } from '../lab/harness.ts';
import { official, startLabFleet, type LabFleet } from '../../../src/lab/fleet/fleet.ts';
import { writeOperatorFiles } from '../../../src/lab/fleet/operator-files.ts';
import { moltArgv } from '../../../src/testkit/molt-entry.ts';
import { launchChromium, signInWithToken, startDashboardOperator } from './browser.ts';

const run = promisify(execFile);
const artifacts = join(import.meta.dirname, '../../../test-artifacts');
const tokens = { alice: 'alice-dashboard-token-0123456789', vic: 'vic-dashboard-token-0123456789' };
let fleet: LabFleet;
let operator: ManagedProcess;
let browser: Browser;
let page: Page;
let url: string;
let api: string;

async function writeConfig(): Promise<string> {
  const pki = await issueOperatorApiCert(fleet.pki.dir);
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
    // Zones a, b, c in each pool (the last character of the machine's name).
    labels: (id) => ({ zone: ['a', 'b', 'c'][(Number(id.at(-1)) - 1) % 3] ?? 'a' }),
    config: {
      pki,
      listen: { host: '127.0.0.1', port: 0 },
      dashboard: {
        listen: { host: '127.0.0.1', port: 0 },
        users: [
          { name: 'alice', role: 'operator', tokenSha256: sha256Hex(tokens.alice) },
          { name: 'vic', role: 'viewer', tokenSha256: sha256Hex(tokens.vic) },
        ],
      },
    },
  });
}

/** `molt rollout status ID -o json` against the operator API, as an operator certificate. */
async function rolloutStatus(id: string): Promise<RolloutView> {
  const pki = fleet.pki.dir;
  const { stdout } = await run(process.execPath, [
    ...[moltEntry, 'rollout', 'status', id, '-o', 'json', '--endpoint', api],
    ...['--cert', join(pki, 'operator.pem'), '--key', join(pki, 'operator.key')],
    ...['--ca', join(pki, 'ca.pem')],
  ]);
  return JSON.parse(stdout) as RolloutView;
}

/** A call to the operator API (mutual TLS, the operator's certificate); its JSON answer. */
async function apiCall<T>(path: string, body?: unknown): Promise<T> {
  const read = (f: string): Promise<string> => readFile(join(fleet.pki.dir, f), 'utf8');
  const [ca, cert, key] = await Promise.all(['ca.pem', 'operator.pem', 'operator.key'].map(read));
  const dispatcher = new Agent({ connect: { ca, cert, key } });
  try {
    const res = await mtlsFetch(new URL(path, api), {
      dispatcher,
      ...(body !== undefined && {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
    });
    assert.ok(res.ok, `${path}: ${String(res.status)}`);
    return (await res.json()) as T;
  } finally {
    await dispatcher.close();
  }
}

/** The rollout's history on the operator API. */
const history = (id: string): Promise<HistoryEventView[]> => apiCall(`/v1/history?rollout=${id}`);

/** Wait until the page has at least `n` elements matching `selector` (it re-renders as it goes). */
async function atLeast(selector: string, n: number, timeout: number): Promise<void> {
  await page
    .locator(selector)
    .nth(n - 1)
    .waitFor({ state: 'attached', timeout });
}

const signIn = (token: string): Promise<void> => signInWithToken(page, token);

const shot = (name: string): Promise<Buffer> =>
  page.screenshot({ path: join(artifacts, name), fullPage: true });

/**
 * What the page's own reads said about machines while they were upgraded: how often one was
 * shown rebooting, and every time a machine the operator was upgrading was shown as merely
 * unreachable instead.
 */
const seen = { rebooting: 0, unreachableInFlight: [] as string[] };
let watching = true;

async function watchReboots(cookie: string): Promise<void> {
  while (watching) {
    const s = await fetch(new URL('/v1/dashboard', url), { headers: { cookie } })
      .then(async (res) => (await res.json()) as DashboardStateView)
      .catch(() => undefined);
    if (s === undefined) break;
    const inFlight = new Set(
      s.rollouts.flatMap((r) =>
        r.machines.filter((m) => m.phase === 'InFlight').map((m) => m.machine),
      ),
    );
    for (const m of s.machines) {
      if (m.observed?.rebooting === true) seen.rebooting++;
      else if (m.observed?.reachable === false && inFlight.has(m.id))
        seen.unreachableInFlight.push(m.id);
    }
    await new Promise((done) => setTimeout(done, 250));
  }
}

const logDir = join(artifacts, 'dashboard-logs');

/**
 * On a failure, the operator's and the machines' last lines: a rollout that stalls on a loaded CI
 * machine is otherwise only a locator's timeout.
 */
async function printLogs(test: string): Promise<void> {
  const tail = (text: string): string => text.split('\n').slice(-60).join('\n');
  const logs = await readdir(logDir).catch(() => []);
  const machines = await Promise.all(
    logs.map(async (f) => `--- ${f}\n${tail(await readFile(join(logDir, f), 'utf8'))}`),
  );
  const op = (operator as ManagedProcess | undefined)?.output() ?? '';
  console.log(`after “${test}” failed:\n--- molt operator\n${tail(op)}\n${machines.join('\n')}`);
}

before(async () => {
  await rm(logDir, { recursive: true, force: true });
  await mkdir(logDir, { recursive: true });
  fleet = await startLabFleet({ molt: moltArgv, workers: 3, logDir });
  // Generous: CI runs this beside VMs and a Kubernetes build on two cores.
  const starting = 180_000;
  ({ process: operator, api, url } = await startDashboardOperator(await writeConfig(), starting));
  browser = await launchChromium(starting);
  page = await browser.newPage({ viewport: { width: 1400, height: 1100 } });
  await mkdir(artifacts, { recursive: true });
});

afterEach(async (t) => {
  // Node 24's TestContext says whether the test passed; this @types/node does not declare it yet.
  if ((t as { readonly passed?: boolean }).passed === false) await printLogs(t.name);
});

after(async () => {
  watching = false;
  // Each is undefined when `before` failed before starting it.
  await (browser as Browser | undefined)?.close();
  await (operator as ManagedProcess | undefined)?.stop(10_000);
  await (fleet as LabFleet | undefined)?.stop();
});

describe('the dashboard in a real browser', () => {
  it('shows an anonymous visitor only the sign-in page, and answers its reads 401', async () => {
    await page.goto(url);
    await page.locator('#login-page').waitFor({ state: 'visible' });
    assert.equal(await page.locator('#overview-page').isHidden(), true);
    assert.equal(await page.locator('#fleet tbody tr').count(), 0);
    await shot('dashboard-login.png');
    const res = await fetch(new URL('/v1/machines', url));
    assert.equal(res.status, 401);
    assert.match(await res.text(), /MOLT_UNAUTHENTICATED/);
  });

  it('shows a viewer every machine from the first paint, and refuses the viewer’s actions', async () => {
    await signIn(tokens.vic);
    await atLeast('#fleet tbody tr[data-version="1.0.0"]', 6, 30_000);
    const rows = await page.locator('#fleet tbody tr').allInnerTexts();
    assert.ok(
      rows.every((r) => /1\.0\.0 ● booted ★/.test(r) && /healthy/.test(r)),
      rows.join('\n'),
    );
    assert.equal(await page.locator('.actions').count(), 0, 'a viewer gets no buttons');
    // First paint: the fleet is drawn with /v1/dashboard unreachable — it came in the page.
    await page.route('**/v1/dashboard', (r) => r.abort());
    await page.reload({ waitUntil: 'load' });
    assert.equal(await page.locator('#fleet tbody tr[data-machine]').count(), 6);
    await page.unroute('**/v1/dashboard');
    const refused = await page.evaluate(async () => {
      const s = (await (await fetch('/v1/session')).json()) as { csrf: string };
      const r = await fetch('/v1/machines/cp-1/hold', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-molt-csrf': s.csrf },
        body: JSON.stringify({ reason: 'try', for: '1h' }),
      });
      return [r.status, ((await r.json()) as { code: string }).code];
    });
    assert.deepEqual(refused, [403, 'MOLT_FORBIDDEN']);
    await page.click('#sign-out');
    await page.locator('#login-page').waitFor({ state: 'visible' });
  });

  it('lets an operator pause and resume a rollout from the page, as molt rollout status shows', async () => {
    await signIn(tokens.alice);
    const cookie = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    void watchReboots(cookie);
    // Remember in the page whether the grid ever said rebooting (it redraws every 2 s and on
    // events). A string: this program has no DOM types.
    await page.evaluate(`new MutationObserver(() => {
      if (document.querySelector('#fleet tr[data-health="rebooting"]') !== null)
        window.sawRebooting = true;
    }).observe(document.body, { childList: true, subtree: true })`);
    await fleet.publish('1.1.0', { ...official, 'dev.molt.channels': 'stable' });
    const card = page.locator('[data-rollout^="workers-1.1.0"]');
    await card.waitFor({ timeout: 60_000 });
    const id = (await card.getAttribute('data-rollout')) ?? '';
    await card.locator('input[aria-label="reason"]').fill('checking the canary first');
    await card.locator('button[data-action="Pause"]').click();
    await page.locator(`[data-rollout="${id}"][data-state="Paused"]`).waitFor({ timeout: 10_000 });
    // The card can turn Paused from the operator's event before the POST's own answer comes
    // back and writes the notice: wait for that answer rather than read the line at once.
    await page.locator('#notice', { hasText: /Pause: .* — done/ }).waitFor({ timeout: 10_000 });

    const status = await rolloutStatus(id);
    assert.equal(status.state, 'Paused');
    const paused = (await history(id)).find((e) => e.kind === 'rollout-state');
    assert.equal(
      paused?.message,
      `rollout ${id} paused by dashboard:alice: checking the canary first`,
    );
    assert.equal(paused.data?.['by'], 'dashboard:alice');

    await page.goto(`${url}#/rollout/${id}`);
    await page.locator('#rollout-state[data-state="Paused"]').waitFor();
    await atLeast('#rollout-events li', 1, 10_000);
    assert.match(await page.locator('#rollout-events').innerText(), /paused by dashboard:alice/);
    await page.locator('#rollout-body button[data-action="Resume"]').click();
    await page.locator('#rollout-state[data-state="Active"]').waitFor({ timeout: 10_000 });
    assert.equal((await rolloutStatus(id)).state, 'Active');
    await page.goto(`${url}#/`);
  });

  it('shows the rollout live, rebooting machines as rebooting, and every machine on 1.1.0', async () => {
    await atLeast('[data-rollout^="control-plane-1.1.0"]:not([data-succeeded="0"])', 1, 120_000);
    await atLeast('#events li', 3, 30_000);
    assert.match(await page.locator('#events').innerText(), /cp-\d/);
    await shot('dashboard-rollout.png');
    await atLeast('[data-rollout*="-1.1.0-"][data-state="Completed"]', 2, 300_000);
    await atLeast('#fleet tbody tr[data-version="1.1.0"]', 6, 30_000);
    watching = false;
    await shot('dashboard-complete.png');
    const text = await page.locator('#fleet').innerText();
    assert.equal(text.match(/1\.1\.0 ● booted ★/g)?.length, 6, text);
    assert.ok(seen.rebooting > 0, 'a machine was seen rebooting while it upgraded');
    assert.deepEqual(
      seen.unreachableInFlight,
      [],
      'no machine being upgraded was called unreachable',
    );
    assert.equal(await page.evaluate('window.sawRebooting === true'), true, 'the grid said so');
    assert.equal(await page.locator('[data-release="1.1.0"]').getAttribute('data-count'), '6');
    assert.ok(
      (await page.locator('#timeline rect.window[data-window="workers"]').count()) >= 3,
      'the workers’ window is shaded behind each worker',
    );
    assert.equal(
      await page.locator('#timeline rect.window[data-window="control-plane"]').count(),
      0,
      'the control plane has no window policy: nothing shaded',
    );
    assert.ok((await page.locator('#timeline [data-tick]').count()) >= 2, 'the axis has ticks');
  });

  it('has a page per rollout and per machine, and filters and groups the fleet from the URL', async () => {
    const id =
      (await page.locator('[data-rollout^="workers-1.1.0"]').getAttribute('data-rollout')) ?? '';
    await page.goto(`${url}#/rollout/${id}`);
    await atLeast('#rollout-machines tbody tr[data-phase="Succeeded"]', 3, 10_000);
    assert.ok((await page.locator('#rollout-body [data-tick]').count()) >= 2);
    await shot('dashboard-rollout-page.png');

    await page.goto(`${url}#/machine/cp-1`);
    await page.locator('#machine-body [data-slot="A"]').waitFor();
    const slots = await page.locator('#machine-body .slot').allInnerTexts();
    assert.ok(
      slots.some((s) => /1\.1\.0/.test(s) && /booted/.test(s) && /committed/.test(s)),
      slots.join('\n'),
    );
    assert.ok(
      slots.some((s) => /1\.0\.0/.test(s) && !/booted/.test(s)),
      slots.join('\n'),
    );
    await atLeast('#machine-rollouts tbody tr[data-rollout]', 1, 10_000);
    await atLeast('#machine-events li', 1, 10_000);
    // The agent's journal, through the operator: the upgrade it just made.
    await atLeast('#machine-operations tbody tr[data-operation]', 1, 10_000);
    assert.match(await page.locator('#machine-operations').innerText(), /Succeeded/);
    assert.match(await page.locator('#machine-events').innerText(), /cp-1/);
    assert.equal(
      await page.locator('#machine-body .hold-form').count(),
      1,
      'an operator may hold it',
    );
    await shot('dashboard-machine.png');

    await page.goto(`${url}?pool=workers&group=zone#/`);
    await atLeast('#fleet tbody tr[data-machine]', 3, 10_000);
    assert.equal(await page.locator('#fleet tbody tr[data-machine]').count(), 3);
    const groups = page.locator('#fleet tr.group');
    assert.deepEqual(
      await Promise.all([0, 1, 2].map((i) => groups.nth(i).getAttribute('data-group'))),
      ['a', 'b', 'c'],
    );
    assert.equal(await groups.count(), 3);
    await page.selectOption('select[data-filter="zone"]', 'b');
    await page.waitForURL(/zone=b/);
    assert.equal(await page.locator('#fleet tbody tr[data-machine]').count(), 1);
    await shot('dashboard-filtered.png');
  });

  it('shows the pools’ releases and rules, and lifts a block from the page', async () => {
    await apiCall('/v1/releases/block', {
      release: '1.1.0',
      pool: 'workers',
      reason: 'firmware advisory 7',
    });
    await page.goto(`${url}#/releases`);
    const workers = page.locator('.pool-card[data-pool="workers"]');
    await workers.waitFor({ timeout: 10_000 });
    const text = await workers.innerText();
    for (const line of [
      /follows: channel stable/,
      /runs: 1\.1\.0 ×3/,
      /canary: 1 machine, then 2s/,
      /at most 1 machine at a time/,
      /windows: 0 \* \* \* \* for 1h/,
    ])
      assert.match(text, line);
    const block = page.locator('#blocks tr[data-block$="/workers"]');
    await block.waitFor({ timeout: 10_000 });
    assert.match(
      await block.innerText(),
      /1\.1\.0\s+workers\s+blocked\s+firmware advisory 7\s+operator/,
    );
    await shot('dashboard-releases.png');
    // Unblock asks for a second click, then the operator lifts it.
    await block.locator('button[data-action="Unblock"]').click();
    await block.locator('button[data-action="Unblock"]').click();
    await page.locator('#notice', { hasText: /1\.1\.0 is offered to pool workers again/ }).waitFor({
      timeout: 10_000,
    });
    assert.deepEqual(await apiCall('/v1/releases/blocks'), []);
    await page.locator('#blocks-note', { hasText: 'No release is blocked.' }).waitFor({
      timeout: 10_000,
    });
  });
});
