// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { tempDir } from '../../platform/process/managed-process.ts';
import { CapiManagers, managerArgs, managerEnv, writeCapiPki } from './capi-files.ts';

const setup = {
  kubeconfig: '/k/admin.kubeconfig',
  webhookCertDir: '/p/core',
  ports: { webhook: 9101, health: 9102, diagnostics: 9103 },
  extensionClient: { cert: '/p/client.crt', key: '/p/client.key' },
};

const flag = (args: readonly string[], name: string): string | undefined =>
  args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

describe('the Cluster API managers’ command lines', () => {
  it('turns on the Runtime SDK and in-place updates, and MachineSet preflight checks off on core only', () => {
    const gates = Object.fromEntries(
      CapiManagers.map((n) => [n, flag(managerArgs(n, setup), 'feature-gates')]),
    );
    assert.deepEqual(gates, {
      'cluster-api-manager': 'RuntimeSDK=true,InPlaceUpdates=true,MachineSetPreflightChecks=false',
      'kubeadm-control-plane-manager': 'RuntimeSDK=true,InPlaceUpdates=true',
      'kubeadm-bootstrap-manager': undefined,
      'capd-manager': 'RuntimeSDK=true,InPlaceUpdates=true',
    });
  });

  it('gives the runtime-extension client certificate to core and KCP, the managers that call extensions', () => {
    const withCert = CapiManagers.filter(
      (n) => flag(managerArgs(n, setup), 'runtime-extension-client-cert-file') === '/p/client.crt',
    );
    assert.deepEqual(withCert, ['cluster-api-manager', 'kubeadm-control-plane-manager']);
    const core = managerArgs('cluster-api-manager', setup);
    assert.equal(flag(core, 'runtime-extension-client-key-file'), '/p/client.key');
  });

  it('listens on its own ports, health and diagnostics on loopback, without leader election', () => {
    const a = managerArgs('kubeadm-bootstrap-manager', setup);
    assert.equal(flag(a, 'webhook-port'), '9101');
    assert.equal(flag(a, 'webhook-cert-dir'), '/p/core');
    assert.equal(flag(a, 'health-addr'), '127.0.0.1:9102');
    assert.equal(flag(a, 'diagnostics-address'), '127.0.0.1:9103');
    assert.equal(flag(a, 'leader-elect'), 'false');
    assert.equal(flag(a, 'kubeconfig'), '/k/admin.kubeconfig');
  });

  it('sets POD_IP=127.0.0.1 for CAPD alone (its in-memory API servers listen there)', () => {
    const base = { PATH: '/bin' };
    assert.equal(managerEnv('capd-manager', base)['POD_IP'], '127.0.0.1');
    assert.equal(managerEnv('cluster-api-manager', base)['POD_IP'], undefined);
    assert.equal(managerEnv('capd-manager', base)['PATH'], '/bin');
  });
});

describe('the management plane’s certificates', () => {
  it('writes a webhook certificate per manager for 127.0.0.1 and a client certificate, all from one CA', async () => {
    const dir = await tempDir('capi-pki-test');
    try {
      const pki = await writeCapiPki(dir.path);
      const ca = new X509Certificate(await readFile(pki.caFile));
      assert.equal(pki.webhookCertDirs.size, CapiManagers.length);
      for (const d of pki.webhookCertDirs.values()) {
        const cert = new X509Certificate(await readFile(join(d, 'tls.crt')));
        assert.equal(cert.checkIP('127.0.0.1'), '127.0.0.1');
        assert.ok(cert.verify(ca.publicKey));
        assert.match(await readFile(join(d, 'tls.key'), 'utf8'), /BEGIN PRIVATE KEY/);
      }
      const client = new X509Certificate(await readFile(pki.extensionClient.cert));
      assert.ok(client.verify(ca.publicKey));
      assert.equal(new Set([...pki.webhookCertDirs.values()]).size, CapiManagers.length);
    } finally {
      await dir.remove();
    }
  });
});
