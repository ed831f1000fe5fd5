// SPDX-License-Identifier: Apache-2.0
// TLS bootstrap on the lab's real control plane, played with openssl and HTTP exactly as a
// kubelet plays it (what a machine installed with `kubernetes.node` does at its first start): a
// bootstrap token from KubeControlPlane.bootstrapToken authenticates, creates a
// CertificateSigningRequest for system:node:n1 that the controller manager approves and signs with
// the cluster CA (deploy/kubernetes/node-bootstrap.yaml), and the certificate then authenticates
// as the node — confined by the Node authorizer and NodeRestriction like any kubelet — and renews
// itself without a token. An expired or unknown token is refused.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { Agent, fetch } from 'undici';
import { createBootstrapToken } from '../../../src/lab/services/kube-bootstrap.ts';
import {
  startKubeControlPlane,
  type KubeControlPlane,
} from '../../../src/lab/services/kube-control-plane.ts';
import { eventually, tempDir } from '../../../src/platform/process/managed-process.ts';

const run = promisify(execFile);
const Signer = 'kubernetes.io/kube-apiserver-client-kubelet';
let cp: KubeControlPlane;
let dir: { path: string; remove: () => Promise<void> };
let token: string;

type Credential = { readonly bearer: string } | { readonly cert: string; readonly key: string };

/** One API request as `who`; the status and the parsed body. */
async function api(
  who: Credential,
  path: string,
  init: { method?: string; body?: object } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const dispatcher = new Agent({
    connect: { ca: cp.ca, ...('cert' in who && { cert: who.cert, key: who.key }) },
  });
  try {
    const res = await fetch(`${cp.server}${path}`, {
      method: init.method ?? 'GET',
      dispatcher,
      headers: {
        ...('bearer' in who && { authorization: `Bearer ${who.bearer}` }),
        ...(init.body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  } finally {
    await dispatcher.close();
  }
}

/** A P-256 key and a CSR for the node `name`, as the kubelet makes them. */
async function keyAndCsr(name: string): Promise<{ key: string; csr: string }> {
  const key = join(dir.path, `${name}-${String(Date.now())}.key`);
  const csr = `${key}.csr`;
  await run('openssl', [
    ...['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'],
    ...['-keyout', key, '-out', csr, '-subj', `/O=system:nodes/CN=system:node:${name}`],
  ]);
  return { key: await readFile(key, 'utf8'), csr: await readFile(csr, 'utf8') };
}

interface Csr {
  metadata: { name: string };
  spec: { username: string; groups: string[] };
  status?: { certificate?: string; conditions?: { type: string }[] };
}

/** Create the CSR as `who`, wait until it is approved and signed; the CSR and the certificate. */
async function certificateFor(
  who: Credential,
  csrPem: string,
): Promise<{ csr: Csr; cert: string }> {
  const created = await api(who, '/apis/certificates.k8s.io/v1/certificatesigningrequests', {
    method: 'POST',
    body: {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { generateName: 'node-csr-' },
      spec: {
        request: Buffer.from(csrPem).toString('base64'),
        signerName: Signer,
        usages: ['digital signature', 'client auth'],
      },
    },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const name = (created.body as unknown as Csr).metadata.name;
  return eventually(
    async () => {
      const got = await api(who, `/apis/certificates.k8s.io/v1/certificatesigningrequests/${name}`);
      const csr = got.body as unknown as Csr;
      const cert = csr.status?.certificate;
      if (cert === undefined)
        throw new Error(`${name} not signed yet: ${JSON.stringify(csr.status)}`);
      return { csr, cert: Buffer.from(cert, 'base64').toString() };
    },
    { timeoutMs: 30_000, intervalMs: 250 },
  );
}

before(async () => {
  dir = await tempDir('node-bootstrap');
  cp = await startKubeControlPlane();
  token = await cp.bootstrapToken({ ttlSeconds: 600, description: 'node-bootstrap test' });
});

after(async () => {
  await cp.stop();
  await dir.remove();
});

describe('a kubelet joining by TLS bootstrap', () => {
  let n1: { cert: string; key: string };

  it('the token is a kube-system bootstrap-token Secret, as kubeadm makes one', async () => {
    assert.match(token, /^[a-z0-9]{6}\.[a-z0-9]{16}$/);
    const [id, secret] = token.split('.') as [string, string];
    const admin = { bearer: cp.admin.token };
    const got = await api(admin, `/api/v1/namespaces/kube-system/secrets/bootstrap-token-${id}`);
    assert.equal(got.status, 200);
    assert.equal(got.body['type'], 'bootstrap.kubernetes.io/token');
    const data = Object.fromEntries(
      Object.entries(got.body['data'] as Record<string, string>).map(([k, v]) => [
        k,
        Buffer.from(v, 'base64').toString(),
      ]),
    );
    assert.equal(data['token-id'], id);
    assert.equal(data['token-secret'], secret);
    assert.equal(data['usage-bootstrap-authentication'], 'true');
    assert.equal(data['usage-bootstrap-signing'], 'true');
    assert.equal(data['auth-extra-groups'], 'system:bootstrappers:molt');
    const expires = Date.parse(data['expiration'] ?? '');
    assert.ok(Math.abs(expires - (Date.now() + 600_000)) < 60_000, data['expiration']);
  });

  it("gets a client certificate for system:node:n1, approved and signed by the cluster's CA", async () => {
    const { key, csr: csrPem } = await keyAndCsr('n1');
    const { csr, cert } = await certificateFor({ bearer: token }, csrPem);
    const [id] = token.split('.');
    assert.equal(csr.spec.username, `system:bootstrap:${String(id)}`);
    assert.ok(csr.spec.groups.includes('system:bootstrappers'));
    assert.ok(csr.spec.groups.includes('system:bootstrappers:molt'));
    assert.ok(csr.status?.conditions?.some((c) => c.type === 'Approved'));
    const x509 = new X509Certificate(cert);
    assert.deepEqual(x509.subject.split('\n').sort(), ['CN=system:node:n1', 'O=system:nodes']);
    assert.ok(x509.verify(new X509Certificate(cp.ca).publicKey), 'signed by the cluster CA');
    n1 = { cert, key };
  });

  it('is the node n1: its own Node readable, another Node and Secrets refused', async () => {
    const admin = { bearer: cp.admin.token };
    const n2 = await api(admin, '/api/v1/nodes', {
      method: 'POST',
      body: { metadata: { name: 'n2' } },
    });
    assert.equal(n2.status, 201);
    // 404: authorized, and there is no Node n1 yet.
    assert.equal((await api(n1, '/api/v1/nodes/n1')).status, 404);
    assert.equal((await api(n1, '/api/v1/nodes/n2')).status, 403);
    const secret = `/api/v1/namespaces/kube-system/secrets/bootstrap-token-${String(token.split('.')[0])}`;
    assert.equal((await api(n1, secret)).status, 403);
  });

  it('registers its own Node, but not with a node-restriction.kubernetes.io/ label', async () => {
    const labelled = await api(n1, '/api/v1/nodes', {
      method: 'POST',
      body: {
        metadata: { name: 'n1', labels: { 'node-restriction.kubernetes.io/molt-pool': 'workers' } },
      },
    });
    assert.equal(labelled.status, 403, JSON.stringify(labelled.body));
    assert.match(String(labelled.body['message']), /node-restriction\.kubernetes\.io/);
    const plain = await api(n1, '/api/v1/nodes', {
      method: 'POST',
      body: { metadata: { name: 'n1' } },
    });
    assert.equal(plain.status, 201, JSON.stringify(plain.body));
    assert.equal((await api(n1, '/api/v1/nodes/n1')).status, 200);
  });

  it('renews its certificate as the node, without a token', async () => {
    const { csr: csrPem } = await keyAndCsr('n1');
    const { csr, cert } = await certificateFor(n1, csrPem);
    assert.equal(csr.spec.username, 'system:node:n1');
    assert.match(new X509Certificate(cert).subject, /CN=system:node:n1/);
  });

  it('an expired or unknown token is 401', async () => {
    const expired = await createBootstrapToken(
      { server: cp.server, ca: cp.ca, bearer: cp.admin.token },
      { ttlSeconds: 60, description: 'expired' },
      new Date(Date.now() - 3_600_000),
    );
    const unknown = 'abcdef.0123456789abcdef';
    const [id] = token.split('.');
    const wrongSecret = `${String(id)}.0123456789abcdef`;
    for (const bearer of [expired, unknown, wrongSecret])
      assert.equal((await api({ bearer }, '/api/v1/nodes/n1')).status, 401, bearer);
    // The token that joined n1 still works: the refusals are the tokens', not the server's.
    assert.notEqual((await api({ bearer: token }, '/api/v1/nodes/n1')).status, 401);
  });
});
