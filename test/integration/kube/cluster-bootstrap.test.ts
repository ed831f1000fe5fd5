// SPDX-License-Identifier: Apache-2.0
// A control-plane machine bootstrapping its cluster (`controlPlane.bootstrap`, docs/adr/0018 §3),
// on a real API server: the agent's bootstrap puts back the TLS-bootstrap RBAC a fresh cluster
// lacks (the lab applied it; the test deletes it first), registers the token its config names, and
// a kubelet's first step then works with that token — a CertificateSigningRequest approved and
// signed. Run again it changes nothing: the token is not made to live longer. A token file
// holding something else is refused before anything is written.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { Agent, fetch } from 'undici';
import { createKubeClusterBootstrap } from '../../../src/agent/adapters/cluster-bootstrap/index.ts';
import {
  bootstrapRecordFile,
  createFsBootstrapRecord,
} from '../../../src/agent/adapters/cluster-bootstrap/record.ts';
import { startClusterBootstrap } from '../../../src/agent/machine/cluster-bootstrap.ts';
import { systemClock } from '../../../src/agent/ports/clock.system.ts';
import {
  startKubeControlPlane,
  type KubeControlPlane,
} from '../../../src/lab/services/kube-control-plane.ts';
import { newBootstrapToken } from '../../../src/platform/kube/bootstrap-token.ts';
import { eventually, tempDir } from '../../../src/platform/process/managed-process.ts';

const run = promisify(execFile);
const Bindings = [
  'molt:kubelet-bootstrap',
  'molt:node-autoapprove-bootstrap',
  'molt:node-autoapprove-certificate-rotation',
];
let cp: KubeControlPlane;
let dir: { path: string; remove: () => Promise<void> };

async function api(
  bearer: string,
  path: string,
  init: { method?: string; body?: object } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const dispatcher = new Agent({ connect: { ca: cp.ca } });
  try {
    const res = await fetch(`${cp.server}${path}`, {
      method: init.method ?? 'GET',
      dispatcher,
      headers: {
        authorization: `Bearer ${bearer}`,
        ...(init.body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  } finally {
    await dispatcher.close();
  }
}

const binding = (name: string): string =>
  `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${name}`;
const tokenSecret = (token: string): string =>
  `/api/v1/namespaces/kube-system/secrets/bootstrap-token-${token.split('.')[0] ?? ''}`;

/** A CSR for a node client certificate, created as `bearer`: 201 when the RBAC lets it. */
async function nodeCsr(bearer: string): Promise<{ status: number; name: string }> {
  const key = join(dir.path, 'n1.key');
  const csr = join(dir.path, 'n1.csr');
  await run('openssl', [
    ...['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'],
    ...['-keyout', key, '-out', csr, '-subj', '/O=system:nodes/CN=system:node:n1'],
  ]);
  const request = Buffer.from(await readFile(csr)).toString('base64');
  const r = await api(bearer, '/apis/certificates.k8s.io/v1/certificatesigningrequests', {
    method: 'POST',
    body: {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { generateName: 'node-csr-' },
      spec: {
        request,
        signerName: 'kubernetes.io/kube-apiserver-client-kubelet',
        usages: ['digital signature', 'client auth'],
      },
    },
  });
  return { status: r.status, name: String((r.body['metadata'] as { name?: string }).name) };
}

before(async () => {
  dir = await tempDir('cluster-bootstrap');
  cp = await startKubeControlPlane();
  for (const name of Bindings)
    assert.equal((await api(cp.admin.token, binding(name), { method: 'DELETE' })).status, 200);
});

after(async () => {
  await cp.stop();
  await dir.remove();
});

describe("a control-plane machine's agent bootstrapping its cluster", () => {
  const token = newBootstrapToken();
  let expiration = '';

  it('applies the TLS-bootstrap RBAC and registers its token; a kubelet can then ask for its certificate', async () => {
    const tokenFile = join(dir.path, 'token');
    await writeFile(tokenFile, `${token}\n`, { mode: 0o600 });
    assert.equal((await api(token, '/api/v1/nodes')).status, 401, 'not a token before');
    const bootstrap = createKubeClusterBootstrap({
      kubeconfig: cp.admin.kubeconfig,
      tokenFile,
      ttlSeconds: 3600,
    });
    const lines: string[] = [];
    const loop = startClusterBootstrap({
      bootstrap,
      record: createFsBootstrapRecord(dir.path),
      clock: systemClock,
      log: (l) => lines.push(l),
    });
    assert.equal(await loop.ended, 'done', lines.join('\n'));
    const recorded = JSON.parse(await readFile(bootstrapRecordFile(dir.path), 'utf8')) as {
      rbac: string[];
      token: string;
    };
    assert.deepEqual(
      recorded.rbac,
      Bindings.map((b) => `ClusterRoleBinding/${b}`),
    );
    assert.equal(recorded.token, 'created');
    for (const name of Bindings)
      assert.equal((await api(cp.admin.token, binding(name))).status, 200, name);
    const secret = await api(cp.admin.token, tokenSecret(token));
    assert.equal(secret.status, 200);
    expiration = Buffer.from(
      (secret.body['data'] as Record<string, string>)['expiration'] ?? '',
      'base64',
    ).toString();
    assert.ok(Math.abs(Date.parse(expiration) - (Date.now() + 3_600_000)) < 120_000, expiration);
    const csr = await nodeCsr(token);
    assert.equal(csr.status, 201, 'the token authenticates and the RBAC lets it ask');
    await eventually(
      async () => {
        const got = await api(
          cp.admin.token,
          `/apis/certificates.k8s.io/v1/certificatesigningrequests/${csr.name}`,
        );
        const conditions = (got.body['status'] as { conditions?: { type: string }[] } | undefined)
          ?.conditions;
        assert.ok(
          conditions?.some((c) => c.type === 'Approved'),
          JSON.stringify(got.body),
        );
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
  });

  it('changes nothing when run again: the token keeps its expiry', async () => {
    const tokenFile = join(dir.path, 'token');
    const again = await createKubeClusterBootstrap({
      kubeconfig: cp.admin.kubeconfig,
      tokenFile,
      ttlSeconds: 7 * 86_400,
    }).run(new Date());
    assert.equal(again.token, 'present');
    const secret = await api(cp.admin.token, tokenSecret(token));
    const now = Buffer.from(
      (secret.body['data'] as Record<string, string>)['expiration'] ?? '',
      'base64',
    ).toString();
    assert.equal(now, expiration);
  });

  it('refuses a token file that holds no token, before it writes anything', async () => {
    const bad = join(dir.path, 'bad-token');
    await writeFile(bad, 'not-a-token\n');
    await api(cp.admin.token, binding(Bindings[0] ?? ''), { method: 'DELETE' });
    await assert.rejects(
      createKubeClusterBootstrap({
        kubeconfig: cp.admin.kubeconfig,
        tokenFile: bad,
        ttlSeconds: 3600,
      }).run(new Date()),
      (e: Error & { code?: string }) =>
        e.code === 'MOLT_MACHINE_INVALID' && e.message.includes('does not hold a bootstrap token'),
    );
    assert.equal((await api(cp.admin.token, binding(Bindings[0] ?? ''))).status, 404);
  });
});
