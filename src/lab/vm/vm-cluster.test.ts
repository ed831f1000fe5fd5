// SPDX-License-Identifier: Apache-2.0
// The host's share of a cluster on VMs: a PKI `molt install --kube-pki` accepts for the cluster,
// served at the first control plane's address, and the lab's users issued by its CA with the
// subjects Kubernetes reads — the operator, and each agent in `molt:agents` by its own name.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { checkKubernetesPki } from '../../platform/pki/kubernetes-check.ts';
import { tempDir } from '../../platform/process/managed-process.ts';
import { adminTls, planVmCluster, VmClusterName, type VmCluster } from './vm-cluster.ts';

const subjectOf = (b64: string | undefined): string =>
  new X509Certificate(Buffer.from(b64 ?? '', 'base64')).subject;

describe('a lab cluster on control-plane VMs, from the host', () => {
  let dir: { path: string; remove: () => Promise<void> };
  let cluster: VmCluster;
  before(async () => {
    dir = await tempDir('vm-cluster');
    cluster = await planVmCluster({
      labDir: dir.path,
      members: [
        { name: 'vm-cp-1', address: '10.231.0.14' },
        { name: 'vm-cp-2', address: '10.231.0.15' },
      ],
      agents: ['vm-cp-1', 'vm-cp-2', 'vm-1'],
      bins: '/nonexistent',
      version: 'v1.35.4',
    });
  });
  after(() => dir.remove());

  it('makes a PKI of its own cluster that the installer’s check accepts, served for every control plane', async () => {
    assert.equal(cluster.server, 'https://10.231.0.14:6443');
    const paths = await checkKubernetesPki(cluster.pkiDir, { cluster: VmClusterName });
    const serving = new X509Certificate(await readFile(paths.apiserverCert));
    for (const ip of ['10.231.0.14', '10.231.0.15'])
      assert.ok(serving.checkIP(ip) !== undefined, `the API server's certificate names ${ip}`);
    assert.match(cluster.bootstrapToken, /^[a-z0-9]{6}\.[a-z0-9]{16}$/);
    // What the lab waits for the API with: the admin's key pair, trusting the cluster CA.
    const tls = await adminTls(cluster.admin.kubeconfig);
    assert.equal(tls.ca, cluster.ca);
    assert.match(new X509Certificate(tls.cert).subject, /CN=kubernetes-admin/);
    assert.match(tls.key, /^-----BEGIN PRIVATE KEY-----/);
  });

  it('issues each agent its own identity in molt:agents, and the operator its own', async () => {
    for (const name of ['vm-cp-1', 'vm-1']) {
      const subject = subjectOf(cluster.agentUser(name)['client-certificate-data']);
      assert.match(subject, new RegExp(`CN=molt:agent:${name}`));
      assert.match(subject, /O=molt:agents/);
    }
    assert.throws(() => cluster.agentUser('vm-9'), /no agent identity for VM vm-9/);
    const file = cluster.operator.kubeconfig;
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    const kc = parse(await readFile(file, 'utf8')) as {
      clusters: { cluster: { server: string } }[];
      users: { user: Record<string, string> }[];
    };
    assert.equal(kc.clusters[0]?.cluster.server, cluster.server);
    const subject = subjectOf(kc.users[0]?.user['client-certificate-data']);
    assert.match(subject, /CN=molt-operator/);
    assert.doesNotMatch(subject, /O=/, 'no group: the operator has only what operator-rbac grants');
  });
});
