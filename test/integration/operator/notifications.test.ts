// SPDX-License-Identifier: Apache-2.0
// Webhook notifications (docs/adr/0009) from the real `molt operator` process over
// two lab workers, its state in a real etcd: while release 1.1.0 rolls out, a receiver on
// loopback gets every transition, signed — it checks each HMAC with its own copy of the secret —
// after a first attempt it answered 503 was retried; a Slack sink gets only the completion. The
// operator restarted sends nothing twice (its cursor is in etcd), and goes on with what is new.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { official, startLabFleet, type WorkerFleet } from '../../../src/lab/fleet/fleet.ts';
import { writeOperatorFiles } from '../../../src/lab/fleet/operator-files.ts';
import { createEtcdOperatorStore } from '../../../src/operator/adapters/etcd-store/operator-store.ts';
import type { OperatorStore } from '../../../src/operator/ports/store.ts';
import {
  eventually,
  startProcess,
  type ManagedProcess,
} from '../../../src/platform/process/managed-process.ts';
import type { WebhookNotification } from '../../../src/protocol/notifications.ts';
import { issueOperatorApiCert } from '../../../src/lab/fleet/operator-pki.ts';
import { OperatorServingPrefix } from '../../../src/protocol/operator.ts';
import { moltArgv, moltEntry } from '../../../src/testkit/molt-entry.ts';
import {
  afterPasses,
  scrapeOperator,
  type ScrapedOperator,
} from '../../../src/testkit/reconcile-passes.ts';

const secret = 'the receiver knows this too';

interface Delivery {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly status: number;
}

/** The receiver's own check: HMAC-SHA256 of `<timestamp>.<body>`, a timestamp of the last 5 min. */
function signedByOperator(d: Delivery): boolean {
  const ts = String(d.headers['x-molt-timestamp']);
  const mac = createHmac('sha256', secret).update(`${ts}.${d.body}`).digest('hex');
  const fresh = Math.abs(Date.now() / 1000 - Number(ts)) < 300;
  return fresh && d.headers['x-molt-signature'] === `sha256=${mac}`;
}

let fleet: WorkerFleet;
let store: OperatorStore;
let operator: ManagedProcess;
let config: string;
let scraped: ScrapedOperator | undefined;
const deliveries: Delivery[] = [];
const receiver = createServer((req, res) => {
  let body = '';
  req.on('data', (c: Buffer) => (body += c.toString()));
  req.on('end', () => {
    // The first delivery of all fails as a receiver restarting would: the operator must retry.
    const status = deliveries.length === 0 ? 503 : 200;
    deliveries.push({ path: req.url ?? '', headers: req.headers, body, status });
    res.writeHead(status).end();
  });
});
const accepted = (path: string): WebhookNotification[] =>
  deliveries
    .filter((d) => d.path === path && d.status === 200)
    .map((d) => JSON.parse(d.body) as WebhookNotification);

const startOperator = async (): Promise<ManagedProcess> => {
  const p = startProcess('molt operator', process.execPath, [
    moltEntry,
    'operator',
    '--config',
    config,
  ]);
  const api = (await p.waitFor(new RegExp(`${OperatorServingPrefix}(\\S+)`), 60_000))[1];
  await scraped?.close();
  scraped = await scrapeOperator(api ?? '', fleet.pki.dir);
  await p.waitFor(/leading as/, 60_000);
  return p;
};

/** How often the operator's worker for `sink` has looked at the history since it started. */
async function checks(sink: string): Promise<number> {
  const text = (await scraped?.metrics()) ?? '';
  const line = new RegExp(`^molt_operator_webhook_checks_total\\{sink="${sink}"\\} (\\d+)$`, 'm');
  const found = line.exec(text)?.[1];
  assert.ok(found !== undefined, `no webhook checks for ${sink} in /metrics`);
  return Number(found);
}

before(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${String((receiver.address() as AddressInfo).port)}`;
  fleet = await startLabFleet({ molt: moltArgv, workers: 2, controlPlane: false });
  await writeFile(join(fleet.dir, 'hook.secret'), `${secret}\n`, { mode: 0o600 });
  config = await writeOperatorFiles(fleet, {
    pools: [{ name: 'workers', channel: 'beta', policies: [{ concurrency: 1 }] }],
    fleetPolicies: [],
    config: {
      // Its API, for the counters of /metrics.
      pki: await issueOperatorApiCert(fleet.pki.dir),
      listen: { host: '127.0.0.1', port: 0 },
      notifications: [
        { name: 'ops', url: `${base}/ops`, secretFile: 'hook.secret' },
        { name: 'chat', url: `${base}/chat`, format: 'slack', events: ['rollout.completed'] },
      ],
    },
  });
  store = createEtcdOperatorStore({ endpoints: fleet.storeEndpoints });
  operator = await startOperator();
  // A new sink starts at the head of the history: wait until both have, then make history.
  await eventually(
    async () => {
      for (const sink of ['ops', 'chat'])
        assert.notEqual(await store.notifyCursor(sink), undefined, sink);
    },
    { timeoutMs: 30_000 },
  );
});

after(async () => {
  await (operator as ManagedProcess | undefined)?.stop(10_000);
  await scraped?.close();
  await (store as OperatorStore | undefined)?.close();
  await (fleet as WorkerFleet | undefined)?.stop();
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));
});

describe('webhook notifications from the real operator', () => {
  it('delivers every transition of a rollout, signed, retried after a 503, each once', async () => {
    await fleet.publish('1.1.0', { ...official, 'dev.molt.channels': 'beta' });
    await eventually(
      () => {
        assert.ok(accepted('/ops').some((n) => n.kind === 'rollout.completed'));
        assert.equal(accepted('/chat').length, 1);
        return Promise.resolve();
      },
      { timeoutMs: 240_000, intervalMs: 500 },
    ).catch((e: unknown) => {
      throw new Error(`${String(e)}\n${operator.output().slice(-3000)}`, { cause: e });
    });
    const ops = deliveries.filter((d) => d.path === '/ops');
    assert.ok(
      ops.every((d) => signedByOperator(d)),
      'every delivery verifies with the shared secret',
    );
    const [refused, retried] = ops;
    assert.ok(refused !== undefined && retried !== undefined);
    assert.equal(refused.status, 503);
    assert.equal(
      retried.headers['x-molt-event-id'],
      refused.headers['x-molt-event-id'],
      'the refused delivery was retried with the same id',
    );
    const got = accepted('/ops');
    assert.equal(new Set(got.map((n) => n.id)).size, got.length, 'each event once');
    assert.deepEqual(
      got.map((n) => n.seq),
      [...got.map((n) => n.seq)].sort((a, b) => a - b),
      'in history order',
    );
    const kinds = got.map((n) => n.kind);
    assert.equal(kinds[0], 'rollout.created');
    assert.equal(kinds.filter((k) => k === 'machine.started').length, 2, kinds.join(' '));
    assert.equal(kinds.filter((k) => k === 'machine.succeeded').length, 2, kinds.join(' '));
    assert.equal(kinds.at(-1), 'rollout.completed');
    for (const n of got.filter((x) => x.kind.startsWith('machine.'))) {
      assert.equal(n.pool, 'workers');
      assert.equal(n.release?.version, '1.1.0');
      assert.match(n.machine ?? '', /^w-[12]$/);
    }
    const [chat] = deliveries.filter((d) => d.path === '/chat');
    assert.equal(chat?.headers['x-molt-signature'], undefined, 'no secret: unsigned');
    const slack = JSON.parse(chat?.body ?? '{}') as { text: string; blocks: unknown[] };
    assert.match(slack.text, /^:white_check_mark: Rollout workers-1\.1\.0-\S+ completed: /);
    assert.equal(slack.blocks.length, 2);
  });

  it('sends nothing twice after a restart, and what happens after it', async () => {
    const before = deliveries.length;
    await operator.stop(10_000);
    operator = await startOperator();
    // Each sink's worker has looked at the history a few times and the loop passed (and kicked
    // them): were anything to be resent, it would have been by now.
    assert.ok(scraped);
    await afterPasses(scraped, 3);
    await eventually(
      async () => {
        for (const sink of ['ops', 'chat']) assert.ok((await checks(sink)) >= 3, sink);
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    assert.equal(deliveries.length, before, 'nothing sent again after the restart');
    await fleet.publish('1.2.0', { ...official, 'dev.molt.channels': 'beta' });
    await eventually(
      () => {
        assert.ok(
          accepted('/ops').some(
            (n) => n.kind === 'rollout.created' && n.release?.version === '1.2.0',
          ),
        );
        return Promise.resolve();
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    assert.ok(deliveries.slice(before).every((d) => d.path !== '/ops' || signedByOperator(d)));
  });
});
