// SPDX-License-Identifier: Apache-2.0
// `GET /v1/images/plan` and the image record on the rollout views, on inject(): any fleet identity
// reads the driver's last plan (no pass yet: no `at`); an image rollout's view carries its policy,
// repository and changes, and each workload the last plan decided on shows that decision.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Plan, Rollout } from '../../core/rollout/types.ts';
import type { Identity } from '../../platform/https/identity.ts';
import { ImagePlanView } from '../../protocol/operator-image-plan.ts';
import { RolloutSummaryView, RolloutView } from '../../protocol/operator.ts';
import { scanOf } from '../../testkit/image-scan.ts';
import { apiFixture } from '../../testkit/operator-api-fixture.ts';
import { createImagePlanHolder, type ImagePlanHolder } from '../images/last-plan.ts';
import type { ImagesDeps } from '../images/observe.ts';
import { FakeWorkloads } from '../ports/workloads.fake.ts';
import { buildOperatorApp } from './app.ts';

const REPO = 'registry.example.com/acme/web';
const dig = (n: number): string => `sha256:${String(n).padStart(64, '0')}`;
const T0 = Date.parse('2026-11-27T10:00:00Z');
const A = 'Deployment/shop/a';
const B = 'Deployment/shop/b';

const rollout: Rollout = {
  id: 'img-web-1.8.0-rev2-00000000',
  pool: 'web/1.8.0-rev2',
  target: { version: '1.8.0-rev2', digest: dig(2) },
  from: { version: '1.8.0-rev2', digest: dig(1) },
  state: 'Active',
  createdAt: T0,
  machines: { [A]: { phase: 'InFlight', startedAt: T0 } },
  images: {
    policy: 'web',
    repository: REPO,
    units: {
      [A]: {
        changes: [
          {
            container: 'web',
            from: `${REPO}:1.8.0-rev2@${dig(1)}`,
            to: `${REPO}:1.8.0-rev2@${dig(2)}`,
          },
        ],
      },
    },
  },
};

const lastPlan: Plan = {
  at: T0 + 1000,
  decisions: [
    { rollout: rollout.id, machine: A, action: 'in-flight', batch: 0 },
    {
      rollout: rollout.id,
      machine: B,
      action: 'wait',
      batch: 1,
      reason: { code: 'CanaryFirst', message: 'the canary goes first' },
    },
  ],
  rollouts: [{ rollout: rollout.id, verdict: 'continue' }],
};

async function app(holder: ImagePlanHolder | undefined) {
  const f = await apiFixture();
  await f.store.createRollout(rollout);
  const images: ImagesDeps | undefined = holder && {
    policies: () => [],
    workloads: new FakeWorkloads(),
    scan: () => Promise.resolve(scanOf({})),
    now: () => T0,
    lastPlan: holder,
  };
  return buildOperatorApp(
    { ...f.deps, ...(images !== undefined && { images }) },
    { identify: () => ({ role: 'node', name: 'w-9' }) satisfies Identity },
  );
}

const get = async (a: Awaited<ReturnType<typeof app>>, url: string) => {
  const res = await a.inject({ method: 'GET', url });
  return { status: res.statusCode, body: res.json<unknown>() };
};

describe('GET /v1/images/plan', () => {
  it('says no pass yet as an empty plan without `at`', async () => {
    const r = await get(await app(createImagePlanHolder()), '/v1/images/plan');
    assert.equal(r.status, 200);
    assert.deepEqual(ImagePlanView.parse(r.body), { leader: true, rollouts: [], decisions: [] });
  });

  it('answers the driver’s last plan: each rollout as planned with its verdict, each decision', async () => {
    const holder = createImagePlanHolder();
    holder.set(lastPlan, [rollout]);
    const r = await get(await app(holder), '/v1/images/plan');
    assert.equal(r.status, 200);
    const v = ImagePlanView.parse(r.body);
    assert.equal(v.at, '2026-11-27T10:00:01.000Z');
    assert.deepEqual(v.rollouts, [
      {
        rollout: rollout.id,
        pool: 'web/1.8.0-rev2',
        policy: 'web',
        target: rollout.target,
        state: 'Active',
        verdict: 'continue',
      },
    ]);
    assert.deepEqual(
      v.decisions.map((d) => [d.machine, d.action, d.reason?.code]),
      [
        [A, 'in-flight', undefined],
        [B, 'wait', 'CanaryFirst'],
      ],
    );
  });

  it('answers MOLT_BAD_INPUT when the operator follows no images', async () => {
    const r = await get(await app(undefined), '/v1/images/plan');
    assert.equal(r.status, 400);
    assert.match(JSON.stringify(r.body), /MOLT_BAD_INPUT.*follows no images/);
  });
});

describe('an image rollout’s views', () => {
  it('carry the image record, and every workload the last plan decided on with its decision', async () => {
    const holder = createImagePlanHolder();
    holder.set(lastPlan, [rollout]);
    const a = await app(holder);
    const one = RolloutView.parse((await get(a, `/v1/rollouts/${rollout.id}`)).body);
    assert.deepEqual(one.images, {
      policy: 'web',
      repository: REPO,
      units: rollout.images?.units,
    });
    assert.deepEqual(
      one.machines.map((m) => [m.machine, m.phase, m.decision?.action, m.decision?.reason?.code]),
      [
        [A, 'InFlight', 'in-flight', undefined],
        [B, 'Pending', 'wait', 'CanaryFirst'],
      ],
    );
    assert.deepEqual(one.counts.total, 2);
    const list = RolloutSummaryView.array().parse((await get(a, '/v1/rollouts')).body);
    const img = list.find((r) => r.id === rollout.id);
    assert.equal(img?.images?.policy, 'web');
    assert.equal(
      list.filter((r) => r.images !== undefined).length,
      1,
      'machine rollouts carry no image record',
    );
  });

  it('before any pass list only the workloads the rollout changed, without a decision', async () => {
    const one = RolloutView.parse(
      (await get(await app(createImagePlanHolder()), `/v1/rollouts/${rollout.id}`)).body,
    );
    assert.deepEqual(
      one.machines.map((m) => [m.machine, m.decision]),
      [[A, undefined]],
    );
  });
});
