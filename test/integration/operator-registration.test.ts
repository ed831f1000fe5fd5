// SPDX-License-Identifier: Apache-2.0
// A machine registering itself with the real `molt operator` process, through
// `molt machine register` with its node certificate: the operator's config lets `w-*` nodes join
// the workers pool, and the operator probes the endpoint through its agent gateway over mutual TLS.
// Node w-6 claiming w-5's agent (the observed attack) and node w-5 claiming a control-plane seat of
// another cluster are refused; w-5 at its own agent joins. Agents: the real agent API (fake
// service) on loopback with `molt pki` certificates.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { createAgentApi, type AgentApi } from '../../src/agent/api/server.ts';
import { createFakeAgentService } from '../../src/agent/api/service.fake.ts';
import { createMemoryJournalStore } from '../../src/agent/ports/journal-store.fake.ts';
import { memoryIo } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import { createCa, issueCertificate } from '../../src/platform/pki/certificates.ts';
import {
  startProcess,
  tempDir,
  type ManagedProcess,
} from '../../src/platform/process/managed-process.ts';

const bin = join(import.meta.dirname, '../../src/bin/molt.ts');

describe('machines registering themselves with molt operator', () => {
  let dir: { path: string; remove: () => Promise<void> };
  let operator: ManagedProcess;
  let agent: AgentApi;
  let url: string;
  const file = (name: string): string => join(dir.path, name);

  const register = async (as: string, args: readonly string[]) => {
    const io = memoryIo();
    const code = await main(
      [
        ...['machine', 'register', ...args, '--endpoint', url, '--ca', file('ca.pem')],
        ...['--cert', file(`${as}.pem`), '--key', file(`${as}.key`)],
      ],
      io,
    );
    return { code, out: io.stdout(), err: io.stderr() };
  };

  before(async () => {
    dir = await tempDir('operator-registration');
    const ca = await createCa();
    const pairs = {
      client: await issueCertificate({ ca, role: 'operator', name: 'operator-1' }),
      server: await issueCertificate({ ca, role: 'node', name: 'operator-1', sans: ['127.0.0.1'] }),
      'w-5': await issueCertificate({ ca, role: 'node', name: 'w-5' }),
      'w-6': await issueCertificate({ ca, role: 'node', name: 'w-6' }),
    };
    await writeFile(file('ca.pem'), ca.cert);
    for (const [name, pair] of Object.entries(pairs)) {
      await writeFile(file(`${name}.pem`), pair.cert);
      await writeFile(file(`${name}.key`), pair.key, { mode: 0o600 });
    }
    agent = await createAgentApi({
      service: createFakeAgentService(),
      journal: createMemoryJournalStore(),
      tls: { ca: ca.cert, ...pairs['w-5'] },
    });
    await writeFile(
      file('fleet.yaml'),
      stringify({ pools: [{ name: 'workers' }, { name: 'cp' }], machines: [] }),
    );
    await writeFile(
      file('operator.yaml'),
      stringify({
        registry: '127.0.0.1:1',
        repository: 'molt/installer',
        insecure: true,
        fleet: 'fleet.yaml',
        pki: {
          ca: 'ca.pem',
          cert: 'client.pem',
          key: 'client.key',
          serverCert: 'server.pem',
          serverKey: 'server.key',
        },
        store: 'memory',
        id: 'operator-1',
        interval: '1s',
        listen: { host: '127.0.0.1', port: 0 },
        selfRegistration: [{ nodes: ['w-*'], pool: 'workers', labels: { zone: ['a', 'b'] } }],
      }),
    );
    operator = startProcess('molt operator', process.execPath, [
      bin,
      'operator',
      '--config',
      file('operator.yaml'),
    ]);
    const m = await operator.waitFor(/^molt operator: serving (https:\/\/127\.0\.0\.1:\d+)$/m);
    url = m[1] ?? '';
  });
  after(async () => {
    await operator.stop();
    await agent.close();
    await dir.remove();
  });

  it('refuses node w-6 registering w-5’s agent as its own', async () => {
    const r = await register('w-6', ['w-6', '--agent', agent.url, '--pool', 'workers']);
    assert.equal(r.code, 1, r.out);
    assert.match(
      r.err,
      /MOLT_AGENT_IDENTITY.*presents the certificate of w-5, not the certificate of w-6/,
    );
  });

  it('refuses node w-5 registering as a control-plane machine of another cluster', async () => {
    const r = await register('w-5', [
      ...['w-5', '--agent', agent.url, '--pool', 'cp', '--role', 'control-plane'],
      ...['--cluster', 'prod'],
    ]);
    assert.equal(r.code, 1, r.out);
    assert.match(r.err, /MOLT_FORBIDDEN.*may not register itself with pool cp/);
  });

  it('lets node w-5 register itself at its own agent, as its rule allows', async () => {
    const r = await register('w-5', [
      ...['w-5', '--agent', agent.url, '--pool', 'workers', '--label', 'zone=a'],
    ]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /machine w-5: registered in pool workers/);
  });
});
