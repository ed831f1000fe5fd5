// SPDX-License-Identifier: Apache-2.0
// `GET /v1/images` on inject(): any fleet identity (the viewer's read permission) reads the view, which parses; without images the
// answer is a stable code.
import { scanOf } from '../../testkit/image-scan.ts';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Identity } from '../../platform/https/identity.ts';
import { dig, policy, REPO, T0 } from '../../core/images/fixtures.test.ts';
import { ImagesView } from '../../protocol/operator-images.ts';
import { apiFixture } from '../../testkit/operator-api-fixture.ts';
import type { ImagesDeps } from '../images/observe.ts';
import { FakeWorkloads } from '../ports/workloads.fake.ts';
import type { Workloads } from '../ports/workloads.ts';
import { buildOperatorApp } from './app.ts';

async function app(images: ImagesDeps | undefined) {
  const f = await apiFixture();
  return buildOperatorApp(
    { ...f.deps, ...(images !== undefined && { images }) },
    {
      identify: (request) => {
        const [role, name] = String(request.headers['x-as'] ?? 'node:w-9').split(':');
        return { role, name } as Identity;
      },
    },
  );
}

function images(): ImagesDeps {
  const workloads = new FakeWorkloads();
  workloads.put({
    kind: 'Deployment',
    namespace: 'shop',
    name: 'web',
    labels: {},
    containers: [{ name: 'web', image: `${REPO}:1.8.0-rev2@${dig(1)}` }],
  });
  return {
    policies: () => [policy()],
    workloads,
    scan: () => Promise.resolve(scanOf({ '1.8.0-rev2': dig(2) })),
    now: () => T0,
  };
}

describe('GET /v1/images', () => {
  it('any fleet identity (a node’s, the least) reads what every followed container runs and would move to', async () => {
    const a = await app(images());
    const res = await a.inject({
      method: 'GET',
      url: '/v1/images',
      headers: { 'x-as': 'node:w-9' },
    });
    assert.equal(res.statusCode, 200, res.body);
    const view = ImagesView.parse(res.json());
    const unit = view.policies[0]?.units[0];
    assert.ok(unit !== undefined);
    assert.equal(unit.id, 'Deployment/shop/web');
    assert.equal(unit.decision.kind, 'move');
    assert.equal(unit.decision.image, `${REPO}:1.8.0-rev2@${dig(2)}`);
  });

  it('answers readers from the workloads and the tags read in the last 10 s: the registry and the cluster are not asked again per request', async () => {
    let at = T0;
    let scans = 0;
    let lists = 0;
    const base = images();
    const inner = base.workloads;
    const workloads: Workloads = {
      list: () => {
        lists++;
        return inner.list();
      },
      platforms: () => inner.platforms(),
      setImages: (ref, changes) => inner.setImages(ref, changes),
      progress: (ref) => inner.progress(ref),
    };
    const a = await app({
      ...base,
      workloads,
      now: () => at,
      scan: () => {
        scans++;
        return Promise.resolve(scanOf({ '1.8.0-rev2': dig(scans + 1) }));
      },
    });
    const read = async () => {
      const res = await a.inject({ method: 'GET', url: '/v1/images' });
      assert.equal(res.statusCode, 200, res.body);
      return ImagesView.parse(res.json()).policies[0]?.units[0]?.decision.image;
    };
    assert.equal(await read(), `${REPO}:1.8.0-rev2@${dig(2)}`);
    at += 9_000;
    assert.equal(await read(), `${REPO}:1.8.0-rev2@${dig(2)}`);
    assert.deepEqual([scans, lists], [1, 1]);
    at += 1_000;
    assert.equal(await read(), `${REPO}:1.8.0-rev2@${dig(3)}`, 'read again after 10 s');
    assert.deepEqual([scans, lists], [2, 2]);
  });

  it('without images answers MOLT_BAD_INPUT saying the operator follows none', async () => {
    const a = await app(undefined);
    const res = await a.inject({
      method: 'GET',
      url: '/v1/images',
      headers: { 'x-as': 'node:w-9' },
    });
    assert.equal(res.statusCode, 400);
    const body = res.json<{ code: string; message: string; hint: string }>();
    assert.equal(body.code, 'MOLT_BAD_INPUT');
    assert.match(body.message, /follows no images/);
    assert.match(body.hint, /kubernetes/);
  });
});
