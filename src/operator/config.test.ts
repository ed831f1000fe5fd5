// SPDX-License-Identifier: Apache-2.0
// Loading `molt operator --config` from files: a selfRegistration rule must name a pool of the
// fleet file (a typo would otherwise refuse every node at run time with no clue why); webhook
// sinks' event globs must match a kind, and their secrets are read as secrets.
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { loadOperatorConfig } from './config.ts';

describe('loading the operator config', () => {
  let dir: string;
  const config = async (selfRegistration: unknown[], more: object = {}): Promise<string> => {
    const path = join(dir, 'operator.yaml');
    await writeFile(
      path,
      stringify({
        registry: 'r',
        repository: 'r',
        fleet: 'fleet.yaml',
        pki: { ca: 'ca.pem', cert: 'ca.pem', key: 'ca.pem' },
        store: 'memory',
        selfRegistration,
        ...more,
      }),
    );
    return path;
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'molt-operator-config-'));
    await writeFile(join(dir, 'ca.pem'), 'not read as PEM here');
    await writeFile(
      join(dir, 'fleet.yaml'),
      stringify({ pools: [{ name: 'workers' }], machines: [] }),
    );
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('reads selfRegistration rules into pools the fleet file defines', async () => {
    const c = await loadOperatorConfig(await config([{ nodes: ['w-*'], pool: 'workers' }]));
    assert.deepEqual(
      c.config.selfRegistration.map((r) => [r.nodes, r.pool, r.role]),
      [[['w-*'], 'workers', 'worker']],
    );
  });

  it('refuses a pool whose provider is Cluster API when the config has no capi section', async () => {
    const fleet = join(dir, 'capi-fleet.yaml');
    await writeFile(
      fleet,
      stringify({
        pools: [{ name: 'md', strategy: 'replace', provider: { capi: {} } }],
        machines: [],
      }),
    );
    const capi = { listen: { host: '127.0.0.1', port: 0 }, clientCa: 'ca.pem' };
    const pem = 'ca.pem';
    const tls = { pki: { ca: pem, cert: pem, key: pem, serverCert: pem, serverKey: pem } };
    await assert.rejects(loadOperatorConfig(await config([], { fleet, ...tls })), {
      code: 'MOLT_CONFIG_INVALID',
      message:
        /pool md names Cluster API as its provider .* but the config has no capi\.kubeconfig/,
    });
    const c = await loadOperatorConfig(
      await config([], { fleet, ...tls, capi: { ...capi, kubeconfig: 'mgmt.kubeconfig' } }),
    );
    assert.deepEqual(c.fleet.pools[0]?.provider, { capi: {} });
  });

  it('names a PKI file that is not there, and where it comes from in a cluster (the Secret) and elsewhere', async () => {
    const path = join(dir, 'no-pki.yaml');
    const pki = { ca: '/etc/molt/pki/ca.pem', cert: 'ca.pem', key: 'ca.pem' };
    await writeFile(
      path,
      stringify({ registry: 'r', repository: 'r', fleet: 'fleet.yaml', pki, store: 'memory' }),
    );
    await assert.rejects(loadOperatorConfig(path), {
      code: 'MOLT_PKI_INVALID',
      message: 'cannot read the fleet CA /etc/molt/pki/ca.pem: ENOENT',
      hint: /^in a cluster: create the Secret molt-operator-pki as deploy\/kubernetes\/operator\.yaml shows .*; elsewhere: `molt pki init` and `molt pki issue`$/,
    });
  });

  it('refuses a rule naming a pool the fleet file does not define', async () => {
    await assert.rejects(loadOperatorConfig(await config([{ nodes: ['w-*'], pool: 'wrokers' }])), {
      code: 'MOLT_CONFIG_INVALID',
      message: /selfRegistration\.0\.pool: the fleet file has no pool wrokers/,
    });
  });

  it('refuses a webhook sink whose events glob matches no event kind (a typo), naming the kinds', async () => {
    const sink = { name: 'ops', url: 'https://hooks.example.com/x' };
    const ok = await loadOperatorConfig(
      await config([], { notifications: [{ ...sink, events: ['rollout.*', 'machine.failed'] }] }),
    );
    assert.deepEqual(ok.config.notifications[0]?.events, ['rollout.*', 'machine.failed']);
    await assert.rejects(
      loadOperatorConfig(
        await config([], { notifications: [{ ...sink, events: ['rollout.*', 'rollout.halt'] }] }),
      ),
      (e: Error & { code?: string; hint?: string }) => {
        assert.equal(e.code, 'MOLT_CONFIG_INVALID');
        assert.match(
          e.message,
          /notifications\.0\.events\.1: "rollout\.halt" matches no event kind/,
        );
        assert.match(e.hint ?? '', /rollout\.halted/);
        return true;
      },
    );
  });

  it('reads each sink secret relative to the config, without its trailing newline, refusing an exposed one', async () => {
    const sink = { name: 'ops', url: 'https://hooks.example.com/x', secretFile: 'hook.secret' };
    await writeFile(join(dir, 'hook.secret'), 's3cret\n', { mode: 0o600 });
    const c = await loadOperatorConfig(await config([], { notifications: [sink] }));
    assert.equal(Buffer.from(c.notificationSecrets.get('ops') ?? []).toString(), 's3cret');
    await chmod(join(dir, 'hook.secret'), 0o644);
    await assert.rejects(loadOperatorConfig(await config([], { notifications: [sink] })), {
      code: 'MOLT_SECRET_EXPOSED',
      message: /hook\.secret holds the secret of notification sink ops/,
    });
    const missing = { ...sink, secretFile: 'nope.secret' };
    await assert.rejects(loadOperatorConfig(await config([], { notifications: [missing] })), {
      code: 'MOLT_CONFIG_INVALID',
      message: /cannot read the secret of notification sink ops, .*nope\.secret: ENOENT/,
    });
  });
});
