// SPDX-License-Identifier: Apache-2.0
// A machine's connection pool over real sockets and mutual TLS: a burst of calls to one agent
// opens a bounded number of connections, the rest wait for one, and every call is answered.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { fetch } from 'undici';
import { eventually } from '../../../platform/process/managed-process.ts';
import { createCa, issueCertificate } from '../../../platform/pki/certificates.ts';
import { machineDispatchers, maxConnectionsPerMachine } from './dispatchers.ts';

describe('a machine’s connection pool', () => {
  const held: ServerResponse[] = [];
  let releasing = false;
  let connections = 0;
  let endpoint = '';
  let server: ReturnType<typeof createServer>;
  let pools: ReturnType<typeof machineDispatchers>;

  before(async () => {
    const ca = await createCa();
    const agent = await issueCertificate({ ca, role: 'node', name: 'm1' });
    const operator = await issueCertificate({ ca, role: 'operator', name: 'molt-operator' });
    // Answers are held until the test lets them go, so the calls overlap.
    server = createServer({ ca: ca.cert, ...agent, requestCert: true }, (_req, res) => {
      if (releasing) res.end('ok');
      else held.push(res);
    });
    server.on('secureConnection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `https://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
    const timeouts = { connectMs: 5_000, headersMs: 5_000, bodyMs: 5_000 };
    pools = machineDispatchers({ ca: ca.cert, ...operator }, timeouts);
  });
  after(async () => {
    await pools.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('opens a bounded number of connections to one agent, however many calls are in flight', async () => {
    const dispatcher = pools.forMachine({ id: 'm1', endpoint });
    const calls = Array.from({ length: 5 * maxConnectionsPerMachine }, () =>
      fetch(`${endpoint}/v1/status`, { dispatcher }).then(async (r) => {
        await r.text();
        return r.status;
      }),
    );
    await eventually(() => {
      assert.equal(held.length, maxConnectionsPerMachine);
      return Promise.resolve();
    });
    assert.equal(connections, maxConnectionsPerMachine, 'the others wait for a connection');
    releasing = true;
    for (const res of held.splice(0)) res.end('ok');
    assert.deepEqual(
      await Promise.all(calls),
      calls.map(() => 200),
    );
    assert.equal(connections, maxConnectionsPerMachine);
  });
});
