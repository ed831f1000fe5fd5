// SPDX-License-Identifier: Apache-2.0
// A node registering itself with the operator: only itself, only into what the
// config's selfRegistration rules allow for its name, and only at an endpoint whose agent presents
// its certificate — checked by the real agent gateway against real agent APIs over mutual TLS on
// loopback (certificates from platform/pki). Operators and admins still register any machine.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createAgentApi, type AgentApi } from '../../agent/api/server.ts';
import { createFakeAgentService } from '../../agent/api/service.fake.ts';
import { createMemoryJournalStore } from '../../agent/ports/journal-store.fake.ts';
import type { Identity } from '../../platform/https/identity.ts';
import { createCa, issueCertificate, type PemPair } from '../../platform/pki/certificates.ts';
import { SelfRegistrationRule } from '../../protocol/operator-config.ts';
import { apiFixture } from '../../testkit/operator-api-fixture.ts';
import { createAgentGateway } from '../adapters/agent-gateway/index.ts';
import type { AgentGateway } from '../ports/agents.ts';
import type { OperatorStore } from '../ports/store.ts';
import { buildOperatorApp } from './app.ts';
import type { SelfRegistration } from '../actions/self-registration.ts';

const workersRule = SelfRegistrationRule.parse({
  nodes: ['w-*'],
  pool: 'workers',
  labels: { zone: ['a', 'b'] },
});

describe('a node registering itself', () => {
  let ca: PemPair;
  const agents: Record<string, AgentApi> = {};
  let gateway: AgentGateway;
  let app: FastifyInstance;
  let store: OperatorStore;

  const build = async (selfRegistration: SelfRegistration | undefined): Promise<void> => {
    const f = await apiFixture();
    store = f.store;
    await app.close();
    app = await buildOperatorApp(
      { ...f.deps, ...(selfRegistration !== undefined && { selfRegistration }) },
      {
        identify: (request) => {
          const [role, name] = String(request.headers['x-as']).split(':');
          return { role, name } as Identity;
        },
      },
    );
  };
  const register = (as: string, body: Record<string, unknown>) =>
    app.inject({
      method: 'POST',
      url: '/v1/machines',
      headers: { 'x-as': as, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
  const agentApi = async (name: string): Promise<AgentApi> => {
    const server = await issueCertificate({ ca, role: 'node', name });
    const api = await createAgentApi({
      service: createFakeAgentService(),
      journal: createMemoryJournalStore(),
      tls: { ca: ca.cert, ...server },
    });
    agents[name] = api;
    return api;
  };
  const withRules = (...rules: SelfRegistrationRule[]): Promise<void> =>
    build({ rules, probe: (m) => gateway.status(m) });

  before(async () => {
    ca = await createCa();
    const operator = await issueCertificate({ ca, role: 'operator', name: 'molt-operator' });
    gateway = createAgentGateway({ ca: ca.cert, ...operator });
    await agentApi('m1');
    await agentApi('w-9');
    app = await buildOperatorApp((await apiFixture()).deps, {
      identify: () => ({ name: 'x', role: 'node' }),
    });
  });
  after(async () => {
    await app.close();
    await gateway.close();
    for (const api of Object.values(agents)) await api.close();
  });

  it('refuses node w-9 registering m1’s endpoint as its own (the observed attack)', async () => {
    await withRules(workersRule);
    const res = await register('node:w-9', {
      id: 'w-9',
      endpoint: agents['m1']?.url,
      pool: 'workers',
    });
    assert.equal(res.statusCode, 403, res.body);
    assert.equal(res.json<{ code: string }>().code, 'MOLT_AGENT_IDENTITY');
    assert.match(res.body, /presents the certificate of m1, not the certificate of w-9/);
    assert.ok(!(await store.read()).machines.some((m) => m.id === 'w-9'), 'nothing registered');
  });

  it('lets node w-9 register itself at its own agent, within its rule', async () => {
    await withRules(workersRule);
    const body = {
      id: 'w-9',
      endpoint: agents['w-9']?.url,
      pool: 'workers',
      labels: { zone: 'b' },
    };
    const res = await register('node:w-9', body);
    assert.equal(res.statusCode, 200, res.body);
    const stored = (await store.read()).machines.find((m) => m.id === 'w-9');
    assert.deepEqual(
      [stored?.endpoint, stored?.pool, stored?.role],
      [body.endpoint, 'workers', 'worker'],
    );
  });

  it('refuses a node registering as a control-plane machine of another cluster', async () => {
    await withRules(workersRule);
    const res = await register('node:w-9', {
      id: 'w-9',
      endpoint: agents['w-9']?.url,
      pool: 'cp',
      role: 'control-plane',
      cluster: 'prod',
    });
    assert.equal(res.statusCode, 403, res.body);
    assert.equal(res.json<{ code: string }>().code, 'MOLT_FORBIDDEN');
    assert.match(
      res.body,
      /may not register itself with pool cp .*role control-plane .*cluster prod/,
    );
    assert.ok(!(await store.read()).machines.some((m) => m.id === 'w-9'));
  });

  it('refuses labels its rule does not allow', async () => {
    await withRules(workersRule);
    const base = { id: 'w-9', endpoint: agents['w-9']?.url, pool: 'workers' };
    const zone = await register('node:w-9', { ...base, labels: { zone: 'c' } });
    assert.equal(zone.statusCode, 403, zone.body);
    assert.match(zone.body, /label zone=c \(allowed: a, b\)/);
    const other = await register('node:w-9', { ...base, labels: { canary: 'yes' } });
    assert.match(other.body, /label canary \(not allowed\)/);
  });

  it('refuses every node when no rule names it (the default), another machine’s id always', async () => {
    await build(undefined);
    const none = await register('node:w-9', {
      id: 'w-9',
      endpoint: agents['w-9']?.url,
      pool: 'workers',
    });
    assert.equal(none.statusCode, 403, none.body);
    assert.match(
      none.body,
      /no selfRegistration rule of the operator lets node w-9 register itself/,
    );
    await withRules(SelfRegistrationRule.parse({ nodes: ['gpu-*'], pool: 'workers' }));
    const unnamed = await register('node:w-9', {
      id: 'w-9',
      endpoint: agents['w-9']?.url,
      pool: 'workers',
    });
    assert.equal(unnamed.statusCode, 403);
    await withRules(workersRule);
    const other = await register('node:w-9', {
      id: 'w-8',
      endpoint: agents['w-9']?.url,
      pool: 'workers',
    });
    assert.equal(other.statusCode, 403);
    assert.match(other.body, /w-9 may register only itself, not w-8/);
  });

  it('refuses a node whose agent cannot be reached to check, and lets an operator register anything', async () => {
    await withRules(workersRule);
    const away = await register('node:w-9', {
      id: 'w-9',
      endpoint: 'https://127.0.0.1:1',
      pool: 'workers',
    });
    assert.equal(away.statusCode, 502, away.body);
    assert.equal(away.json<{ code: string }>().code, 'MOLT_AGENT_UNREACHABLE');
    // An operator is trusted with the inventory; the gateway still checks every connection.
    const byOperator = await register('operator:alice', {
      id: 'cp-9',
      endpoint: 'https://127.0.0.1:1',
      pool: 'cp',
      role: 'control-plane',
      cluster: 'prod',
    });
    assert.equal(byOperator.statusCode, 200, byOperator.body);
  });
});
