// SPDX-License-Identifier: Apache-2.0
// What a reader who has not signed in sees on a dashboard with `anonymousRead`, over a real
// socket: that a machine is held but not why (nor, for a hold since released or a release block,
// who gave which reason, wherever a message quotes it), no agent endpoint anywhere (not inside a failure's
// reason, an event or an error either) and no URL at all; a signed-in person sees the same state
// with all of it, which shows each text was there to leak.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { ListeningApi } from '../../platform/https/server.ts';
import { sha256Hex } from '../../platform/pki/tokens.ts';
import { apiFixture, fixtureNow } from '../../testkit/operator-api-fixture.ts';
import { createDashboardServer } from './dashboard-server.ts';

const token = 'ada-token-0123456789';
const reason = 'INC-4711 flaky NIC, ask Bob';
const unreachable =
  'the agent of cp-1 at https://cp-1.lab:7443 is unreachable: connect ECONNREFUSED 10.0.0.1:7443';
const provider = 'replace cp-1: provider at https://molt:s3cret@provider.lab/ unreachable';
// Words of holds released and of a release block, as the operator and the agent quote them.
const releasedHold =
  'w-2: not started, the machine is held on its agent: w-2 is held until 2026-11-24T09:30:00.000Z by zelda: INC-9001 RAID rebuild, ask Erin';
const releasedSkip = 'held until 2026-11-24T09:30:00.000Z: INC-9002 swap the PSU: ask Erin';
const blocked =
  'rollout workers-1.1.0 paused: release 1.1.0 was blocked by dashboard:zelda: CVE-2026-0042, ask Dave';
const peoplesWords = /INC-900|RAID|PSU|Erin|zelda|CVE-2026|Dave/;

let server: ListeningApi;
let cookie = '';

before(async () => {
  const f = await apiFixture();
  await f.store.setHold('w-3', { reason, until: fixtureNow + 3_600_000, by: 'alice' });
  await f.store.updateRollout('cp-1.0.9', (r) => ({
    ...r,
    machines: {
      ...r.machines,
      'cp-1': { phase: 'Failed', startedAt: fixtureNow - 60_000, reason: unreachable },
    },
  }));
  await f.store.updateRollout('workers-1.0.1', (r) => ({
    ...r,
    machines: {
      'w-4': { phase: 'Skipped', finishedAt: fixtureNow - 60_000, reason: releasedSkip },
    },
  }));
  for (const message of [`cp-1: Failed (${unreachable})`, provider, releasedHold])
    await f.store.appendHistory({
      at: fixtureNow,
      kind: 'machine-result',
      rollout: 'cp-1.0.9',
      machine: 'cp-1',
      message,
    });
  await f.store.appendHistory({
    at: fixtureNow,
    kind: 'rollout-state',
    rollout: 'workers-1.1.0',
    message: blocked,
  });
  const journal = {
    operations: (m: { id: string; endpoint: string }) =>
      Promise.reject(
        new MoltError(
          ErrorCode.AgentUnreachable,
          `the agent of ${m.id} at ${m.endpoint} is unreachable`,
        ),
      ),
  };
  server = await createDashboardServer({
    deps: { ...f.deps, journal },
    access: {
      users: [{ name: 'ada', role: 'admin', tokenSha256: sha256Hex(token) }],
      anonymousRead: true,
      sessionTtl: 3_600_000,
    },
    tls: undefined,
    host: '127.0.0.1',
    port: 0,
  });
  const origin = new URL(server.url).origin;
  const res = await fetch(new URL('/v1/session', server.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin },
    body: JSON.stringify({ token }),
  });
  assert.equal(res.status, 200);
  cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
});
after(() => server.close());

/** The body of `path`, read anonymously or with the session. */
async function read(path: string, signedIn = false): Promise<{ status: number; text: string }> {
  const res = await fetch(new URL(path, server.url), {
    headers: signedIn ? { cookie } : {},
  });
  return { status: res.status, text: await res.text() };
}

const reads = [
  '/',
  '/v1/dashboard',
  '/v1/plan',
  '/v1/plan?explain=true',
  '/v1/rollouts/workers-1.1.0',
];
const everything = [
  ...reads,
  '/v1/rollouts',
  '/v1/rollouts/cp-1.0.9',
  '/v1/rollouts/workers-1.0.1',
  '/v1/machines',
  '/v1/events',
  '/v1/machines/cp-1/operations',
];

describe('the dashboard, to a reader who has not signed in', () => {
  it('shows that a machine is held, not why', async () => {
    for (const path of reads) {
      const anonymous = await read(path);
      assert.equal(anonymous.status, 200, path);
      assert.doesNotMatch(anonymous.text, /INC-4711|flaky|Bob/, path);
      assert.match(
        (await read(path, true)).text,
        /INC-4711 flaky NIC/,
        `${path}: a signed-in person reads it`,
      );
    }
    const plan = JSON.parse((await read('/v1/plan')).text) as {
      decisions: { rollout: string; machine: string; reason?: { code: string; message: string } }[];
    };
    const w3 = plan.decisions.find((d) => d.machine === 'w-3' && d.rollout === 'workers-1.1.0');
    assert.equal(w3?.reason?.code, 'Held');
    assert.match(w3.reason.message, /^held until 2026-11-24T11:00:00Z: \[reason hidden\]$/);
  });

  it('shows no reason nor name of a hold released or a release blocked, wherever quoted', async () => {
    for (const path of everything) {
      const anonymous = await read(path);
      assert.doesNotMatch(anonymous.text, peoplesWords, path);
    }
    const events = (await read('/v1/events')).text;
    assert.match(
      events,
      /w-2 is held until 2026-11-24T09:30:00\.000Z by \[name hidden\]: \[reason hidden\]"/,
    );
    assert.match(events, /release 1\.1\.0 was blocked by \[name hidden\]: \[reason hidden\]"/);
    const rollout = JSON.parse((await read('/v1/rollouts/workers-1.0.1')).text) as {
      machines: { machine: string; reason?: string }[];
    };
    assert.equal(
      rollout.machines.find((m) => m.machine === 'w-4')?.reason,
      'held until 2026-11-24T09:30:00.000Z: [reason hidden]',
    );
    assert.match((await read('/v1/events', true)).text, /INC-9001 RAID.*CVE-2026-0042, ask Dave/s);
    assert.match((await read('/v1/rollouts/workers-1.0.1', true)).text, /INC-9002 swap the PSU/);
  });

  it('names no agent endpoint: not in a failure’s reason, an event or an error', async () => {
    for (const path of everything) {
      const { text } = await read(path);
      assert.doesNotMatch(text, /cp-1\.lab|10\.0\.0\.1|:7443/, path);
    }
    const rollout = JSON.parse((await read('/v1/rollouts/cp-1.0.9')).text) as {
      machines: { machine: string; reason?: string }[];
    };
    assert.equal(
      rollout.machines.find((m) => m.machine === 'cp-1')?.reason,
      'the agent of cp-1 at [address hidden] is unreachable: connect ECONNREFUSED [address hidden]',
    );
    const ops = await read('/v1/machines/cp-1/operations');
    assert.equal(ops.status, 502);
    assert.match(ops.text, /MOLT_AGENT_UNREACHABLE.*the agent of cp-1 at \[address hidden\]/);
    for (const path of ['/', '/v1/rollouts/cp-1.0.9', '/v1/events', '/v1/machines/cp-1/operations'])
      assert.match((await read(path, true)).text, /https:\/\/cp-1\.lab:7443/, path);
  });

  it('shows no URL, nor the user and password one carries', async () => {
    for (const path of everything)
      assert.doesNotMatch((await read(path)).text, /s3cret|provider\.lab|https?:\/\//, path);
    assert.match((await read('/v1/events')).text, /provider at \[address hidden\] unreachable/);
  });
});
