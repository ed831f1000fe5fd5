// SPDX-License-Identifier: Apache-2.0
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, cp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isMoltError } from '../../protocol/index.ts';
import { tempDir } from '../process/managed-process.ts';
import { bootstrapTokenIn, checkKubernetesPki } from './kubernetes-check.ts';
import { KubernetesPkiFiles, type KubernetesPkiFile } from './kubernetes-layout.ts';
import { writeKubernetesPki } from './kubernetes.ts';

const dayMs = 86_400_000;

describe('checkKubernetesPki', () => {
  let tmp: { path: string; remove: () => Promise<void> };
  let prod: string;
  let other: string;
  let copies = 0;
  before(async () => {
    tmp = await tempDir('kube-pki-check');
    prod = join(tmp.path, 'prod');
    other = join(tmp.path, 'other');
    const server = 'https://10.232.0.10:6443';
    await writeKubernetesPki({ cluster: 'prod', dir: prod, server });
    await writeKubernetesPki({ cluster: 'staging', dir: other, server });
  });
  after(() => tmp.remove());

  /** A copy of prod's PKI to tamper with, and a way to take a file from the other cluster's. */
  async function copy(): Promise<{
    dir: string;
    path: (f: KubernetesPkiFile) => string;
    take: (f: KubernetesPkiFile) => Promise<void>;
  }> {
    const dir = join(tmp.path, `copy-${String(++copies)}`);
    await cp(prod, dir, { recursive: true });
    const path = (f: KubernetesPkiFile) => join(dir, KubernetesPkiFiles[f]);
    const take = async (f: KubernetesPkiFile) => {
      await writeFile(path(f), await readFile(join(other, KubernetesPkiFiles[f])));
      await chmod(path(f), 0o600);
    };
    return { dir, path, take };
  }

  async function refused(dir: string, pattern: RegExp, now?: Date): Promise<void> {
    await assert.rejects(checkKubernetesPki(dir, { cluster: 'prod', ...(now && { now }) }), (e) => {
      assert.ok(isMoltError(e, 'MOLT_KUBE_PKI_INVALID'), String(e));
      assert.match(e.message, pattern);
      return true;
    });
  }

  it('passes an untouched copy and answers every file’s path', async () => {
    const { dir, path } = await copy();
    const paths = await checkKubernetesPki(dir, { cluster: 'prod' });
    assert.equal(paths.dir, dir);
    for (const f of Object.keys(KubernetesPkiFiles) as KubernetesPkiFile[])
      assert.equal(paths[f], path(f));
  });

  it('refuses a missing file, naming it', async () => {
    const { dir, path } = await copy();
    await rm(path('saPub'));
    await refused(dir, new RegExp(`^missing ${path('saPub')}$`));
  });

  it('refuses a key readable by group or others, with its mode', async () => {
    const { dir, path } = await copy();
    await chmod(path('apiserverKey'), 0o644);
    await refused(
      dir,
      new RegExp(`^${path('apiserverKey')}: holds a private key .* \\(mode 0644\\)`),
    );
  });

  it('refuses a kubeconfig readable by others: it embeds a key', async () => {
    const { dir, path } = await copy();
    await chmod(path('adminConf'), 0o604);
    await refused(dir, new RegExp(`^${path('adminConf')}: holds a private key .*mode 0604`));
  });

  it('refuses the CA of another cluster, naming that cluster', async () => {
    const { dir, path, take } = await copy();
    await take('caCert');
    await refused(
      dir,
      new RegExp(`^${path('caCert')}: is the CA of the cluster staging, not of this cluster`),
    );
  });

  it('refuses the check for another cluster’s name (the PKI is prod’s)', async () => {
    const { dir, path } = await copy();
    await assert.rejects(checkKubernetesPki(dir, { cluster: 'prod-2' }), (e) => {
      assert.ok(isMoltError(e, 'MOLT_KUBE_PKI_INVALID'));
      assert.match(e.message, new RegExp(`^${path('caCert')}: is the CA of the cluster prod, not`));
      return true;
    });
  });

  it('refuses a certificate that does not chain to ca.crt, even with its own key', async () => {
    const { dir, path, take } = await copy();
    await take('apiserverCert');
    await take('apiserverKey');
    await refused(
      dir,
      new RegExp(`^${path('apiserverCert')}: is not signed by the CA molt kubernetes CA prod`),
    );
  });

  it('refuses a front-proxy client that is not the front-proxy CA’s', async () => {
    const { dir, path, take } = await copy();
    await take('frontProxyClientCert');
    await take('frontProxyClientKey');
    await refused(
      dir,
      new RegExp(
        `^${path('frontProxyClientCert')}: is not signed by the CA molt front-proxy CA prod`,
      ),
    );
  });

  it('refuses a key that does not match its certificate', async () => {
    const { dir, path, take } = await copy();
    await take('kubeletClientKey');
    await refused(
      dir,
      new RegExp(`^${path('kubeletClientCert')}: does not match ${path('kubeletClientKey')}$`),
    );
  });

  it('refuses a CA key that is not the CA’s', async () => {
    const { dir, path, take } = await copy();
    await take('caKey');
    await refused(dir, new RegExp(`^${path('caCert')}: does not match ${path('caKey')}$`));
  });

  it('refuses an expired certificate', async () => {
    const { dir, path } = await copy();
    await refused(
      dir,
      new RegExp(`^${path('apiserverCert')}: has expired`),
      new Date(Date.now() + 366 * dayMs),
    );
  });

  it('refuses a certificate not yet valid', async () => {
    const { dir, path } = await copy();
    await refused(
      dir,
      new RegExp(`^${path('caCert')}: is not yet valid`),
      new Date(Date.now() - dayMs),
    );
  });

  it('refuses a kubeconfig that trusts another cluster’s CA', async () => {
    const { dir, path, take } = await copy();
    await take('adminConf');
    await refused(
      dir,
      new RegExp(`^${path('adminConf')}: trusts the CA molt kubernetes CA staging, not`),
    );
  });

  it('refuses a kubeconfig holding another component’s certificate', async () => {
    const { dir, path } = await copy();
    await writeFile(path('schedulerConf'), await readFile(path('controllerManagerConf')));
    await refused(
      dir,
      new RegExp(
        `^${path('schedulerConf')}: is the certificate of system:kube-controller-manager, expected CN=system:kube-scheduler`,
      ),
    );
  });

  it('refuses a file that is not what its name says', async () => {
    const { dir, path } = await copy();
    await writeFile(path('apiserverCert'), 'not a certificate\n');
    await refused(dir, new RegExp(`^${path('apiserverCert')}: is not a PEM certificate`));
  });

  it('refuses a service-account public key that is not sa.key’s', async () => {
    const { dir, path, take } = await copy();
    await take('saPub');
    await refused(dir, new RegExp(`^${path('saPub')}: is not the public key of ${path('saKey')}`));
  });

  it('takes a PKI without a bootstrap token, and refuses one open to others or holding no token', async () => {
    const { dir } = await copy();
    const token = join(dir, 'bootstrap-token');
    assert.equal(await bootstrapTokenIn(dir), token);
    const tokenRefused = async (pattern: RegExp): Promise<void> => {
      await assert.rejects(bootstrapTokenIn(dir), (e) => {
        assert.ok(isMoltError(e, 'MOLT_KUBE_PKI_INVALID'), String(e));
        assert.match(e.message, pattern);
        return true;
      });
    };
    await chmod(token, 0o640);
    await tokenRefused(
      /bootstrap-token: holds the cluster's bootstrap token and is open to group or others \(mode 0640\)/,
    );
    await writeFile(token, 'abcdef.short\n', { mode: 0o600 });
    await chmod(token, 0o600);
    await tokenRefused(/bootstrap-token: does not hold a bootstrap token/);
    await rm(token);
    assert.equal(await bootstrapTokenIn(dir), undefined);
    await checkKubernetesPki(dir, { cluster: 'prod' });
  });
});
