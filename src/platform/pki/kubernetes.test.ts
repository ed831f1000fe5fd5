// SPDX-License-Identifier: Apache-2.0
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { createServer, get } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { isMoltError } from '../../protocol/index.ts';
import { tempDir } from '../process/managed-process.ts';
import { bootstrapTokenIn, checkKubernetesPki } from './kubernetes-check.ts';
import { KubernetesPkiFiles, kubernetesPkiPaths } from './kubernetes-layout.ts';
import { writeKubernetesPki } from './kubernetes.ts';

const run = promisify(execFile);

interface KubeconfigFile {
  clusters: { name: string; cluster: { server: string; 'certificate-authority-data': string } }[];
  users: {
    name: string;
    user: { 'client-certificate-data': string; 'client-key-data': string };
  }[];
  'current-context': string;
}

const fromB64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');

describe('writeKubernetesPki', () => {
  let tmp: { path: string; remove: () => Promise<void> };
  let dir: string;
  let paths: ReturnType<typeof kubernetesPkiPaths>;
  before(async () => {
    tmp = await tempDir('kube-pki');
    dir = join(tmp.path, 'prod');
    paths = kubernetesPkiPaths(dir);
    await writeKubernetesPki({
      cluster: 'prod',
      dir,
      server: 'https://cp.example.test:6443',
      sans: [
        { type: 'ip', value: '10.232.0.10' },
        { type: 'dns', value: 'cp-1.lab' },
      ],
      serviceCidr: '10.100.0.0/16',
      dnsDomain: 'corp.internal',
    });
  });
  after(() => tmp.remove());

  it('writes kubeadm’s layout and a bootstrap token, every file 0600 in 0700 directories, and its check passes', async () => {
    assert.deepEqual((await readdir(dir)).sort(), [
      'admin.conf',
      'bootstrap-token',
      'controller-manager.conf',
      'pki',
      'scheduler.conf',
    ]);
    const pkiFiles = Object.values(KubernetesPkiFiles)
      .filter((f) => f.startsWith('pki/'))
      .map((f) => f.slice('pki/'.length));
    assert.deepEqual((await readdir(join(dir, 'pki'))).sort(), pkiFiles.sort());
    for (const d of [dir, join(dir, 'pki')]) assert.equal((await stat(d)).mode & 0o777, 0o700, d);
    for (const f of [...Object.values(KubernetesPkiFiles), 'bootstrap-token'])
      assert.equal((await stat(join(dir, f))).mode & 0o777, 0o600, f);
    assert.equal(
      (await checkKubernetesPki(dir, { cluster: 'prod' })).apiserverCert,
      paths.apiserverCert,
    );
    assert.equal(await bootstrapTokenIn(dir), join(dir, 'bootstrap-token'));
    assert.match(
      await readFile(join(dir, 'bootstrap-token'), 'utf8'),
      /^[a-z0-9]{6}\.[a-z0-9]{16}\n$/,
    );
  });

  it('openssl verifies every certificate against its CA', async () => {
    for (const [ca, leaf] of [
      [paths.caCert, paths.apiserverCert],
      [paths.caCert, paths.kubeletClientCert],
      [paths.frontProxyCaCert, paths.frontProxyClientCert],
    ] as const) {
      const { stdout } = await run('openssl', ['verify', '-CAfile', ca, leaf]);
      assert.equal(stdout.trim(), `${leaf}: OK`);
    }
    // The front-proxy client is not the cluster CA's: a mix-up would let it act as any user.
    await assert.rejects(
      run('openssl', ['verify', '-CAfile', paths.caCert, paths.frontProxyClientCert]),
    );
  });

  it('names the API server as kubeadm does, with the given SANs, the server host and the first service address', async () => {
    const { stdout } = await run('openssl', [
      'x509',
      '-in',
      paths.apiserverCert,
      '-noout',
      '-ext',
      'subjectAltName',
    ]);
    for (const san of [
      'DNS:kubernetes',
      'DNS:kubernetes.default',
      'DNS:kubernetes.default.svc',
      'DNS:kubernetes.default.svc.corp.internal',
      'DNS:localhost',
      'DNS:cp.example.test',
      'DNS:cp-1.lab',
      'IP Address:127.0.0.1',
      'IP Address:10.100.0.1',
      'IP Address:10.232.0.10',
    ])
      assert.match(stdout, new RegExp(`(^|[ ,])${san.replaceAll('.', '\\.')}(,|$)`, 'm'), san);
    const text = (await run('openssl', ['x509', '-in', paths.apiserverCert, '-noout', '-text']))
      .stdout;
    assert.match(text, /TLS Web Server Authentication/);
    assert.doesNotMatch(text, /TLS Web Client Authentication/);
  });

  it('gives each client the subject Kubernetes authorises it by', async () => {
    const subject = (pem: string) => new X509Certificate(pem).subject.replaceAll('\n', ', ');
    assert.equal(
      subject(await readFile(paths.kubeletClientCert, 'utf8')),
      'CN=kube-apiserver-kubelet-client, O=system:masters',
    );
    assert.equal(
      subject(await readFile(paths.caCert, 'utf8')),
      'CN=molt kubernetes CA prod, O=molt',
    );
    for (const [conf, expected] of [
      [paths.adminConf, 'CN=kubernetes-admin, O=system:masters'],
      [paths.controllerManagerConf, 'CN=system:kube-controller-manager'],
      [paths.schedulerConf, 'CN=system:kube-scheduler'],
    ] as const) {
      const k = parse(await readFile(conf, 'utf8')) as KubeconfigFile;
      const [cluster, user] = [k.clusters[0], k.users[0]];
      assert.ok(cluster && user, conf);
      assert.equal(cluster.name, 'prod');
      assert.equal(cluster.cluster.server, 'https://cp.example.test:6443');
      assert.equal(
        fromB64(cluster.cluster['certificate-authority-data']),
        await readFile(paths.caCert, 'utf8'),
      );
      const cert = fromB64(user.user['client-certificate-data']);
      assert.equal(subject(cert), expected, conf);
      const certFile = join(tmp.path, 'client.crt');
      await writeFile(certFile, cert);
      const { stdout } = await run('openssl', ['verify', '-CAfile', paths.caCert, certFile]);
      assert.match(stdout, /: OK$/m);
    }
  });

  it('writes the service-account public key of its private key (as openssl derives it)', async () => {
    const { stdout } = await run('openssl', ['pkey', '-in', paths.saKey, '-pubout']);
    assert.equal(stdout, await readFile(paths.saPub, 'utf8'));
  });

  it('serves TLS that a client with admin.conf’s credentials completes, trusting only ca.crt', async () => {
    const k = parse(await readFile(paths.adminConf, 'utf8')) as KubeconfigFile;
    const server = createServer(
      {
        cert: await readFile(paths.apiserverCert),
        key: await readFile(paths.apiserverKey),
        ca: await readFile(paths.caCert),
        requestCert: true,
        rejectUnauthorized: true,
      },
      (_req, res) => res.end('ok'),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const user = k.users[0]?.user;
      const answer = await new Promise<string>((resolve, reject) => {
        get(
          {
            host: '127.0.0.1',
            port,
            // A name the serving certificate must carry (kubeadm's in-cluster one).
            servername: 'kubernetes.default.svc',
            ca: fromB64(k.clusters[0]?.cluster['certificate-authority-data'] ?? ''),
            cert: fromB64(user?.['client-certificate-data'] ?? ''),
            key: fromB64(user?.['client-key-data'] ?? ''),
          },
          (res) => {
            let body = '';
            res.on('data', (c: Buffer) => {
              body += c.toString();
            });
            res.on('end', () => {
              resolve(body);
            });
          },
        ).on('error', reject);
      });
      assert.equal(answer, 'ok');
    } finally {
      server.close();
    }
  });

  it('refuses a non-empty directory without force, and replaces the PKI with it', async () => {
    const before = await readFile(paths.caCert, 'utf8');
    await assert.rejects(
      writeKubernetesPki({ cluster: 'prod', dir, server: 'https://10.0.0.1:6443' }),
      (e) => isMoltError(e, 'MOLT_KUBE_PKI_INVALID') && /is not empty/.test(e.message),
    );
    assert.equal(await readFile(paths.caCert, 'utf8'), before);
    const other = join(tmp.path, 'forced');
    await mkdir(other, { mode: 0o755 });
    await writeFile(join(other, 'notes'), 'kept\n');
    await assert.rejects(
      writeKubernetesPki({ cluster: 'prod', dir: other, server: 'https://10.0.0.1:6443' }),
      /is not empty/,
    );
    await writeKubernetesPki({
      cluster: 'prod',
      dir: other,
      server: 'https://10.0.0.1:6443',
      force: true,
    });
    const first = await readFile(join(other, KubernetesPkiFiles.caCert), 'utf8');
    await writeKubernetesPki({
      cluster: 'prod',
      dir: other,
      server: 'https://10.0.0.1:6443',
      force: true,
    });
    assert.notEqual(await readFile(join(other, KubernetesPkiFiles.caCert), 'utf8'), first);
    assert.equal(await readFile(join(other, 'notes'), 'utf8'), 'kept\n');
    // An existing directory is made its owner's only, as a new one is.
    assert.equal((await stat(other)).mode & 0o777, 0o700);
    await checkKubernetesPki(other, { cluster: 'prod' });
  });

  it('refuses bad input before it writes anything', async () => {
    const target = join(tmp.path, 'never');
    for (const [o, pattern] of [
      [{ cluster: 'Prod_1' }, /cluster name Prod_1 must be/],
      [{ serviceCidr: '10.96.0.1/12' }, /not a network address \(10\.96\.0\.0\/12 is\)/],
      [{ server: 'http://10.0.0.1:6443' }, /must be an https/],
      [{ dnsDomain: 'bad_domain' }, /is not a DNS domain/],
    ] as const) {
      await assert.rejects(
        writeKubernetesPki({ cluster: 'prod', dir: target, server: 'https://10.0.0.1:6443', ...o }),
        (e) => isMoltError(e, 'MOLT_BAD_INPUT') && pattern.test(e.message),
      );
    }
    await assert.rejects(stat(target), { code: 'ENOENT' });
  });
});
