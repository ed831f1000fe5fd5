// SPDX-License-Identifier: Apache-2.0
// The Kubernetes routes on inject(), over the plan tests' fake cluster (three control-plane machines).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Identity } from '../../platform/https/identity.ts';
import { apiFixture } from '../../testkit/operator-api-fixture.ts';
import { createKubePlanDriver } from '../kubernetes/driver.ts';
import { actions, world, type World } from '../kubernetes/fixtures.test.ts';
import { buildOperatorApp } from './app.ts';

async function app(w: World): Promise<{ app: FastifyInstance; idle: () => Promise<void> }> {
  const f = await apiFixture();
  const plans = w.deps({ store: w.store });
  const driver = createKubePlanDriver(plans);
  const built = await buildOperatorApp(
    {
      ...f.deps,
      store: w.store,
      kubernetes: {
        plans,
        kick: (c) => {
          driver.kick(c);
        },
      },
    },
    {
      identify: (request) => {
        const [role, name] = String(request.headers['x-as'] ?? 'node:n-1').split(':');
        return { role, name } as Identity;
      },
    },
  );
  return {
    app: built,
    idle: async () => {
      await new Promise((r) => setTimeout(r, 10));
      await driver.idle();
    },
  };
}

const post = (a: FastifyInstance, url: string, body: unknown, as = 'admin:alice') =>
  a.inject({
    method: 'POST',
    url,
    headers: { 'x-as': as, 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });

describe('the Kubernetes routes', () => {
  it('a dry run answers the checks and the steps and changes nothing', async () => {
    const w = await world();
    const { app: a } = await app(w);
    const res = await post(a, '/v1/clusters/default/kubernetes/upgrade', {
      version: 'v1.36.3',
      dryRun: true,
    });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json<{
      dryRun: boolean;
      changed: boolean;
      plan: { checks: { name: string }[]; steps: { id: string }[] };
    }>();
    assert.equal(body.dryRun, true);
    assert.equal(body.changed, false);
    assert.equal(body.plan.checks.length, 6);
    assert.equal(body.plan.steps.length, 13);
    assert.deepEqual(await w.store.kubeUpgrades(), []);
    assert.equal(await w.store.kubeDesired('default'), undefined);
    assert.deepEqual(actions(w.agents.calls), []);
  });

  it('an upgrade records the desired version with who asked, and the plan runs', async () => {
    const w = await world();
    const { app: a, idle } = await app(w);
    const res = await post(a, '/v1/clusters/default/kubernetes/upgrade', { version: 'v1.36.3' });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json<{ changed: boolean }>().changed, true);
    assert.equal((await w.store.kubeDesired('default'))?.by, 'alice');
    await idle();
    const status = await a.inject({
      method: 'GET',
      url: '/v1/clusters/default/kubernetes',
      headers: { 'x-as': 'node:n-1' },
    });
    const s = status.json<{
      desired: { version: string; by: string };
      machines: { machine: string; components: { version: string; emulatedVersion: string }[] }[];
      plan: { phase: string; steps: { state: string }[] };
    }>();
    assert.equal(s.desired.version, 'v1.36.3');
    assert.equal(s.desired.by, 'alice');
    assert.equal(s.plan.phase, 'Succeeded');
    assert.equal(s.machines.length, 3);
    assert.ok(
      s.machines.every((m) =>
        m.components.every((c) => c.version === 'v1.36.3' && c.emulatedVersion === '1.35'),
      ),
    );
  });

  it('refuses with the stable code and the checks, before anything changes', async () => {
    const w = await world();
    const { app: a } = await app(w);
    const res = await post(a, '/v1/clusters/default/kubernetes/upgrade', { version: 'v1.37.0' });
    assert.equal(res.statusCode, 409);
    const body = res.json<{ code: string; details: { checks: { name: string; ok: boolean }[] } }>();
    assert.equal(body.code, 'MOLT_KUBE_VERSION_SKEW');
    assert.equal(body.details.checks.find((c) => c.name === 'path')?.ok, false);
    assert.equal(
      (await post(a, '/v1/clusters/default/kubernetes/upgrade', { version: 'v1.36.9' })).json<{
        code: string;
      }>().code,
      'MOLT_KUBE_BUNDLE_NOT_FOUND',
    );
    assert.equal(
      (await post(a, '/v1/clusters/default/kubernetes/upgrade', { version: '1.36' })).statusCode,
      400,
    );
    assert.deepEqual(await w.store.kubeUpgrades(), []);
    assert.deepEqual(actions(w.agents.calls), []);
  });

  it('needs the operator or admin role to ask', async () => {
    const w = await world();
    const { app: a } = await app(w);
    const res = await post(
      a,
      '/v1/clusters/default/kubernetes/upgrade',
      { version: 'v1.36.3' },
      'node:cp-1',
    );
    assert.equal(res.statusCode, 403);
  });

  it('finalizes, then refuses to roll a finalize back; rolls a succeeded upgrade back to from', async () => {
    const w = await world();
    const { app: a, idle } = await app(w);
    await post(a, '/v1/clusters/default/kubernetes/upgrade', { version: 'v1.36.3' });
    await idle();
    const back = await post(a, '/v1/clusters/default/kubernetes/rollback', { reason: 'test' });
    assert.equal(back.statusCode, 200, back.body);
    assert.equal(
      back.json<{ plan: { kind: string; target: { version: string } } }>().plan.kind,
      'rollback',
    );
    await idle();
    assert.ok(
      [...w.agents.running.values()].every((r) =>
        [...r.values()].every((s) => s.version === 'v1.35.4' && s.emulatedVersion === undefined),
      ),
    );
    assert.equal((await w.store.kubeDesired('default'))?.spec.version, 'v1.35.4');
    await post(a, '/v1/clusters/default/kubernetes/upgrade', { version: 'v1.36.3' });
    await idle();
    const fin = await post(a, '/v1/clusters/default/kubernetes/finalize', {});
    assert.equal(fin.json<{ plan: { kind: string } }>().plan.kind, 'finalize');
    await idle();
    const refused = await post(a, '/v1/clusters/default/kubernetes/rollback', {});
    assert.equal(refused.json<{ code: string }>().code, 'MOLT_ROLLOUT_STATE');
    const down = await post(a, '/v1/clusters/default/kubernetes/upgrade', { version: 'v1.35.4' });
    assert.equal(down.json<{ code: string }>().code, 'MOLT_KUBE_DOWNGRADE_WINDOW');
    // The next minor opens its own window: the finalize asked for 1.36 does not carry over.
    const next = await post(a, '/v1/clusters/default/kubernetes/upgrade', { version: 'v1.37.0' });
    assert.equal(
      next.json<{ plan: { target: { emulatedVersion: string } } }>().plan.target.emulatedVersion,
      '1.36',
    );
    assert.equal((await w.store.kubeDesired('default'))?.spec.finalize, false);
  });

  it('rolls a moving plan back in reverse when a person asks', async () => {
    const w = await world();
    const { app: a, idle } = await app(w);
    let asked: Promise<unknown> | undefined;
    w.agents.onApply = async (m, c) => {
      if (m !== 'cp-3' || c !== 'kube-apiserver' || asked !== undefined) return;
      asked = post(a, '/v1/clusters/default/kubernetes/rollback', { reason: 'stop' });
      await asked; // the person's rollback is recorded while this step runs
    };
    await post(a, '/v1/clusters/default/kubernetes/upgrade', { version: 'v1.36.3' });
    await idle();
    await asked;
    await idle();
    const [plan] = await w.store.kubeUpgrades('default');
    assert.equal(plan?.phase, 'RolledBack');
    assert.match(plan.reason ?? '', /rolled back by alice: stop/);
    assert.ok(
      [...w.agents.running.values()].every((r) =>
        [...r.values()].every((s) => s.version === 'v1.35.4'),
      ),
    );
    const second = await post(a, '/v1/clusters/default/kubernetes/upgrade', { version: 'v1.36.3' });
    assert.equal(second.statusCode, 200);
  });
});
