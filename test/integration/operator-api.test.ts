// SPDX-License-Identifier: Apache-2.0
// The real `molt operator` process with `listen` in its config, on the in-memory store and an
// empty fleet: it prints where it serves, answers the API and FleetLock over mutual TLS with a
// `molt pki` certificate, serves FleetLock to clients without a certificate (Zincati) on its own
// listener, `molt rollout list` reaches it, and it stops cleanly on SIGTERM.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Agent, fetch } from 'undici';
import { stringify } from 'yaml';
import { memoryIo } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import { createCa, issueCertificate } from '../../src/platform/pki/certificates.ts';
import { createOperatorClient } from '../../src/protocol/operator-client.ts';
import { OperatorServingPrefix } from '../../src/protocol/operator.ts';
import {
  startProcess,
  tempDir,
  type ManagedProcess,
} from '../../src/platform/process/managed-process.ts';

const bin = join(import.meta.dirname, '../../src/bin/molt.ts');

describe('molt operator serving its API', () => {
  let dir: { path: string; remove: () => Promise<void> };
  let operator: ManagedProcess;
  let url: string;
  let fleetLockUrl: string;
  const tls: Record<string, string> = {};
  const file = (name: string): string => join(dir.path, name);

  before(async () => {
    dir = await tempDir('operator-api');
    const ca = await createCa();
    const pairs = {
      client: await issueCertificate({ ca, role: 'operator', name: 'operator-1' }),
      server: await issueCertificate({ ca, role: 'node', name: 'operator-1', sans: ['127.0.0.1'] }),
      alice: await issueCertificate({ ca, role: 'operator', name: 'alice' }),
      root: await issueCertificate({ ca, role: 'admin', name: 'root' }),
    };
    await writeFile(file('ca.pem'), ca.cert);
    for (const [name, pair] of Object.entries(pairs)) {
      await writeFile(file(`${name}.pem`), pair.cert);
      await writeFile(file(`${name}.key`), pair.key, { mode: 0o600 });
    }
    Object.assign(tls, {
      ca: ca.cert,
      ...pairs.alice,
      adminCert: pairs.root.cert,
      adminKey: pairs.root.key,
    });
    await writeFile(
      file('fleet.yaml'),
      stringify({ pools: [{ name: 'workers', policies: [] }], machines: [] }),
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
        fleetLock: {
          listen: { host: '127.0.0.1', port: 0 },
          clients: [
            { id: 'fcos-1', group: 'workers' },
            { id: 'fcos-2', group: 'workers' },
          ],
        },
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
    const f = await operator.waitFor(
      /^molt operator: FleetLock at (https:\/\/127\.0\.0\.1:\d+\/fleetlock)$/m,
    );
    fleetLockUrl = f[1] ?? '';
  });
  after(async () => {
    await operator.stop();
    await dir.remove();
  });

  it('prints the port it bound, not 0', () => {
    assert.ok(operator.output().includes(`${OperatorServingPrefix}${url}`));
    assert.notEqual(new URL(url).port, '0');
  });

  it('answers the API and FleetLock over mutual TLS', async () => {
    const dispatcher = new Agent({
      connect: { ca: tls['ca'], cert: tls['cert'], key: tls['key'] },
    });
    try {
      const client = createOperatorClient({
        baseUrl: url,
        fetch: async (u, init) => {
          const res = await fetch(u, { ...init, dispatcher });
          return { status: res.status, text: () => res.text(), body: res.body };
        },
      });
      assert.deepEqual(await client.rollouts(), []);
      assert.deepEqual(await client.machines(), []);
      assert.match(await client.metrics(), /^molt_operator_leader 1$/m);
      const lock = await fetch(`${url}/fleetlock/v1/pre-reboot`, {
        method: 'POST',
        dispatcher,
        headers: { 'fleet-lock-protocol': 'true' },
        body: JSON.stringify({ client_params: { id: 'w-1', group: 'workers' } }),
      });
      // alice's certificate speaks for alice only; an admin's for any id.
      assert.equal(lock.status, 403);
      assert.equal(((await lock.json()) as { kind: string }).kind, 'forbidden');
    } finally {
      await dispatcher.close();
    }
  });

  it('serves FleetLock without a client certificate on its own listener, as Zincati calls it', async () => {
    // Zincati presents no certificate: the mTLS API refuses it, the FleetLock listener does not.
    const anonymous = new Agent({ connect: { ca: tls['ca'] } });
    const lock = (base: string, step: string, id: string) =>
      fetch(`${base}/v1/${step}`, {
        method: 'POST',
        dispatcher: anonymous,
        headers: { 'fleet-lock-protocol': 'true' },
        body: JSON.stringify({ client_params: { id, group: 'workers' } }),
      });
    const mtls = new Agent({
      connect: { ca: tls['ca'], cert: tls['adminCert'], key: tls['adminKey'] },
    });
    try {
      await assert.rejects(lock(`${url}/fleetlock`, 'pre-reboot', 'fcos-1'));
      // Only the listed ids: w-1 is no client of the anonymous listener, and a made-up id neither.
      assert.equal((await lock(fleetLockUrl, 'steady-state', 'w-1')).status, 403);
      assert.equal((await lock(fleetLockUrl, 'pre-reboot', 'made-up')).status, 403);
      assert.equal((await lock(fleetLockUrl, 'pre-reboot', 'fcos-1')).status, 200);
      const full = await lock(fleetLockUrl, 'pre-reboot', 'fcos-2');
      assert.equal(full.status, 423);
      assert.equal(((await full.json()) as { kind: string }).kind, 'failed_lock_semaphore_full');
      // One semaphore behind both doors: an admin on the API waits for fcos-1 too.
      const viaApi = await fetch(`${url}/fleetlock/v1/pre-reboot`, {
        method: 'POST',
        dispatcher: mtls,
        headers: { 'fleet-lock-protocol': 'true' },
        body: JSON.stringify({ client_params: { id: 'w-1', group: 'workers' } }),
      });
      assert.equal(viaApi.status, 423);
      assert.equal((await lock(fleetLockUrl, 'steady-state', 'fcos-1')).status, 200);
      assert.equal((await lock(fleetLockUrl, 'pre-reboot', 'fcos-2')).status, 200);
    } finally {
      await Promise.all([anonymous.close(), mtls.close()]);
    }
  });

  it('is reached by `molt rollout list`', async () => {
    const io = memoryIo();
    const code = await main(
      [
        'rollout',
        'list',
        '--endpoint',
        url,
        '--ca',
        file('ca.pem'),
        '--cert',
        file('alice.pem'),
        '--key',
        file('alice.key'),
      ],
      io,
    );
    assert.equal(code, 0, io.stderr());
    assert.equal(io.stdout(), 'ROLLOUT  POOL  TARGET  STATE  DONE  IN FLIGHT  FAILED  CREATED\n');
  });

  it('serves its Kubernetes plans: a cluster without control-plane machines is refused with its code', async () => {
    const io = memoryIo();
    const args = [
      '--endpoint',
      url,
      '--ca',
      file('ca.pem'),
      '--cert',
      file('alice.pem'),
      '--key',
      file('alice.key'),
    ];
    const code = await main(
      ['cluster', 'kubernetes', 'upgrade', '--to', 'v1.36.3', '--dry-run', ...args],
      io,
    );
    assert.equal(code, 1);
    assert.match(io.stderr(), /MOLT_UNKNOWN_MACHINE: cluster default has no control-plane machine/);
    const status = memoryIo();
    assert.equal(
      await main(['cluster', 'kubernetes', 'status', '-o', 'json', ...args], status),
      0,
      status.stderr(),
    );
    assert.deepEqual(JSON.parse(status.stdout()), { cluster: 'default', machines: [], plans: [] });
  });

  it('stops on SIGTERM with exit code 0', async () => {
    await operator.stop();
    assert.equal(await operator.exited, 0, operator.output());
    assert.match(operator.output(), /SIGTERM: stopping/);
  });
});
