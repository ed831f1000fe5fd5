// SPDX-License-Identifier: Apache-2.0
// The Kubernetes agents adapter over real sockets and mutual TLS, against a stand-in of the agent's
// control-plane routes (node:https): the route and body of each call, the machine's identity
// checked, the agent's own error codes kept.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createCa, issueCertificate, type PemPair } from '../../../platform/pki/certificates.ts';
import type { KubeAgents } from '../../ports/kube-agents.ts';
import type { MachineRecord } from '../../ports/store.ts';
import { createKubeAgents } from './index.ts';
import { machineFixture } from '../../../testkit/operator-store-fixtures.ts';

const record = (id: string, endpoint: string): MachineRecord => ({
  ...machineFixture(id),
  endpoint,
  role: 'control-plane',
  pool: 'cp',
});

describe('the Kubernetes agents adapter', () => {
  let ca: PemPair;
  let server: Server;
  let url: string;
  let agents: KubeAgents;
  const seen: { method: string; url: string; body: unknown }[] = [];

  before(async () => {
    ca = await createCa();
    const cert = await issueCertificate({ ca, role: 'node', name: 'cp-1' });
    server = createServer(
      { ca: ca.cert, cert: cert.cert, key: cert.key, requestCert: true, rejectUnauthorized: true },
      (req, res) => {
        let text = '';
        req.on('data', (c: Buffer) => (text += c.toString()));
        req.on('end', () => {
          seen.push({
            method: req.method ?? '',
            url: req.url ?? '',
            body: text === '' ? undefined : JSON.parse(text),
          });
          res.setHeader('content-type', 'application/json');
          if (req.url === '/v1/kubernetes/components/kube-scheduler') {
            res.statusCode = 502;
            res.end(
              JSON.stringify({
                code: 'MOLT_KUBE_COMPONENT_UNHEALTHY',
                message: 'kube-scheduler did not become healthy: unknown flag --x',
              }),
            );
            return;
          }
          const answers: Record<string, unknown> = {
            '/v1/kubernetes/components/kube-apiserver': {
              name: 'kube-apiserver',
              version: 'v1.36.3',
              hash: 'h',
              running: true,
              healthy: true,
            },
            '/v1/kubernetes/prepull': {
              bundle: 'r@sha256:' + 'a'.repeat(64),
              version: 'v1.36.3',
              dir: '/state/k',
            },
            '/v1/etcd/forfeit-leadership': { leader: 'b2', moved: true },
            '/v1/etcd/members': [
              {
                id: 'a1',
                name: 'cp-1',
                peerUrls: [],
                clientUrls: [],
                isLeader: true,
                isLearner: false,
              },
            ],
            '/v1/kubernetes': { components: [], staged: [] },
          };
          res.end(JSON.stringify(answers[req.url ?? ''] ?? {}));
        });
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
    const operator = await issueCertificate({ ca, role: 'operator', name: 'molt-operator' });
    agents = createKubeAgents({ ca: ca.cert, ...operator });
  });
  after(async () => {
    await agents.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('calls the control-plane routes with the plan’s spec', async () => {
    const bundle = `127.0.0.1:5000/acme/k@sha256:${'a'.repeat(64)}`;
    const m = record('cp-1', url);
    await agents.prepull(m, bundle);
    const view = await agents.apply(m, 'kube-apiserver', {
      version: 'v1.36.3',
      bundle,
      emulatedVersion: '1.35',
      extraArgs: { v: '2' },
    });
    assert.equal(view.healthy, true);
    assert.deepEqual((await agents.forfeitLeadership(m)).moved, true);
    assert.equal((await agents.etcdMembers(m))[0]?.isLeader, true);
    assert.deepEqual(seen.slice(0, 3), [
      { method: 'POST', url: '/v1/kubernetes/prepull', body: { bundle } },
      {
        method: 'POST',
        url: '/v1/kubernetes/components/kube-apiserver',
        body: { version: 'v1.36.3', bundle, extraArgs: { v: '2' }, emulatedVersion: '1.35' },
      },
      { method: 'POST', url: '/v1/etcd/forfeit-leadership', body: {} },
    ]);
  });

  it("keeps the agent's own error code", async () => {
    await assert.rejects(
      agents.apply(record('cp-1', url), 'kube-scheduler', {
        version: 'v1.36.3',
        bundle: `r@sha256:${'a'.repeat(64)}`,
        extraArgs: {},
      }),
      { code: 'MOLT_KUBE_COMPONENT_UNHEALTHY' },
    );
  });

  it('refuses an agent presenting another machine’s certificate, sending it nothing', async () => {
    const before = seen.length;
    await assert.rejects(agents.controlPlane(record('cp-2', url)), { code: 'MOLT_AGENT_IDENTITY' });
    assert.equal(seen.length, before);
  });
});
