// SPDX-License-Identifier: Apache-2.0
// The control-plane routes: every role reads, only operator and admin certificates pre-pull and
// apply, bodies are strict, a worker answers MOLT_NOT_CONTROL_PLANE, and an apply that takes
// longer than the listener's idle timeout still gets its answer.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { fetch } from 'undici';
import { ErrorCode } from '../../core/errors.ts';
import { ErrorBody, type Role } from '../../protocol/agent.ts';
import { createKubernetesAgentClient } from '../../protocol/agent-kubernetes-client.ts';
import { limitedServerFactory } from '../../platform/https/listener.ts';
import { createControlPlane } from '../machine/control-plane.ts';
import {
  createFakeBundles,
  createFakeProbe,
  createFakeSupervisor,
  createInMemoryRecords,
} from '../ports/control-plane.fake.ts';
import { systemClock } from '../ports/clock.system.ts';
import { createMemoryJournalStore } from '../ports/journal-store.fake.ts';
import type { KubernetesService } from './kubernetes-routes.ts';
import { injectFetch } from '../../testkit/inject-fetch.ts';
import { buildAgentApp } from './routes.ts';
import { createFakeAgentService } from './service.fake.ts';

const bundle = `reg/kube@sha256:${'6'.repeat(64)}`;
const apply = { version: 'v1.36.3', bundle };

function controlPlane() {
  const supervisor = createFakeSupervisor();
  const bundles = createFakeBundles({ [bundle]: 'v1.36.3' });
  const cp = createControlPlane({
    components: { 'kube-apiserver': { args: ['--secure-port=6443'], port: 6443, env: {} } },
    initial: { binaries: '/opt/kube', version: 'v1.35.4' },
    supervisor,
    probe: createFakeProbe(supervisor),
    bundles,
    records: createInMemoryRecords(),
    clock: systemClock,
    sha256: (t) => createHash('sha256').update(t).digest('hex'),
    healthTimeoutMs: 5_000,
  });
  return { cp, supervisor, bundles };
}

function setup(role: Role, kubernetes: KubernetesService | null = controlPlane().cp) {
  return buildAgentApp({
    service: createFakeAgentService(),
    journal: createMemoryJournalStore(),
    identify: () => ({ name: `${role}-1`, role }),
    ...(kubernetes !== null && { kubernetes }),
  });
}

const codeOf = (body: unknown): string => ErrorBody.parse(body).code;

describe('agent API: the control-plane components', () => {
  it('lets an operator pre-pull and apply through the typed client, and a node read', async () => {
    const m = controlPlane();
    await m.cp.services.startAll();
    const app = setup('operator', m.cp);
    const client = createKubernetesAgentClient({
      baseUrl: 'http://agent',
      fetch: injectFetch(app),
    });
    assert.equal((await client.prepull({ bundle })).version, 'v1.36.3');
    const view = await client.applyComponent('kube-apiserver', apply);
    assert.equal(view.version, 'v1.36.3');
    assert.equal(view.healthy, true);
    const status = await setup('node', m.cp).inject({ method: 'GET', url: '/v1/kubernetes' });
    assert.equal(status.statusCode, 200, status.body);
    assert.equal(
      status.json<{ components: { version: string }[] }>().components[0]?.version,
      'v1.36.3',
    );
  });

  it('forbids a node certificate to pre-pull or apply', async () => {
    const m = controlPlane();
    const app = setup('node', m.cp);
    for (const [url, payload] of [
      ['/v1/kubernetes/prepull', { bundle }],
      ['/v1/kubernetes/components/kube-apiserver', apply],
    ] as const) {
      const res = await app.inject({ method: 'POST', url, payload });
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(codeOf(res.json()), ErrorCode.Forbidden);
    }
    assert.deepEqual(m.bundles.pulls, []);
    assert.deepEqual(m.supervisor.calls, []);
  });

  it('refuses bodies and names that are not well formed with 400 naming the field', async () => {
    const app = setup('admin');
    for (const [url, payload, field] of [
      [
        '/v1/kubernetes/prepull',
        { bundle: 'reg/kube:v1.36.3' },
        /bundle: must be a reference by digest/,
      ],
      ['/v1/kubernetes/prepull', { bundle, extra: 1 }, /extra: unknown field/],
      [
        '/v1/kubernetes/components/kube-apiserver',
        { ...apply, version: '1.36' },
        /version: must be a Kubernetes version/,
      ],
      [
        '/v1/kubernetes/components/kube-apiserver',
        { ...apply, emulatedVersion: 'kube=1.35' },
        /emulatedVersion/,
      ],
      [
        '/v1/kubernetes/components/kube-apiserver',
        { ...apply, extraArgs: { '--v': '2' } },
        /extraArgs/,
      ],
      ['/v1/kubernetes/components/kubelet', apply, /component name/],
      [
        '/v1/kubernetes/components/kube-apiserver',
        { ...apply, extraArgs: { 'secure-port': '1' } },
        /--secure-port/,
      ],
    ] as const) {
      const res = await app.inject({ method: 'POST', url, payload });
      assert.equal(res.statusCode, 400, `${url} ${JSON.stringify(payload)}: ${res.body}`);
      assert.equal(codeOf(res.json()), ErrorCode.BadInput);
      assert.match(ErrorBody.parse(res.json()).message, field);
    }
  });

  it('answers MOLT_NOT_CONTROL_PLANE on a machine that renders no components', async () => {
    const app = setup('admin', null);
    for (const [method, url, payload] of [
      ['GET', '/v1/kubernetes', undefined],
      ['POST', '/v1/kubernetes/prepull', { bundle }],
      ['POST', '/v1/kubernetes/components/kube-apiserver', apply],
    ] as const) {
      const res = await app.inject({ method, url, ...(payload && { payload }) });
      assert.equal(res.statusCode, 409, res.body);
      assert.equal(codeOf(res.json()), ErrorCode.NotControlPlane);
    }
  });

  it('answers an unhealthy apply with 409 MOLT_KUBE_COMPONENT_UNHEALTHY', async () => {
    const m = controlPlane();
    await m.cp.services.startAll();
    m.supervisor.exits = (spec) => spec.args.includes('--no-such-flag=x');
    const res = await setup('operator', m.cp).inject({
      method: 'POST',
      url: '/v1/kubernetes/components/kube-apiserver',
      payload: { ...apply, extraArgs: { 'no-such-flag': 'x' } },
    });
    assert.equal(res.statusCode, 409, res.body);
    assert.equal(codeOf(res.json()), ErrorCode.KubeComponentUnhealthy);
  });

  it('keeps the connection of an apply that outlasts the listener’s idle timeout', async () => {
    const slow: KubernetesService = {
      status: () => Promise.reject(new Error('unused')),
      prepull: () => Promise.reject(new Error('unused')),
      apply: async (name) => {
        await new Promise((r) => setTimeout(r, 1_200));
        return { name, hash: 'h', running: true, healthy: true };
      },
    };
    const app = buildAgentApp(
      {
        service: createFakeAgentService(),
        journal: createMemoryJournalStore(),
        identify: () => ({ name: 'operator-1', role: 'operator' }),
        kubernetes: slow,
      },
      {
        serverFactory: limitedServerFactory(undefined, {
          idleTimeoutMs: 300,
          requestTimeoutMs: 300,
        }),
      },
    );
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const res = await fetch(`${url}/v1/kubernetes/components/kube-apiserver`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(apply),
      });
      assert.equal(res.status, 200);
      assert.equal(((await res.json()) as { healthy: boolean }).healthy, true);
    } finally {
      await app.close();
    }
  });
});
