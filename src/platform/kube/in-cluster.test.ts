// SPDX-License-Identifier: Apache-2.0
// Loading the pod's own identity (an operator running as a Deployment): the API server from the
// service environment, the token and CA from the service account mount, the pod's namespace — and
// a clear MOLT_KUBECONFIG_INVALID outside a pod or without the mount.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { loadInClusterKubeConfig, SERVICE_ACCOUNT_DIR } from './client.ts';

describe('loading the in-cluster kubeconfig', () => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const k of ['KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT'])
      if (saved[k] === undefined) Reflect.deleteProperty(process.env, k);
      else process.env[k] = saved[k];
  });

  async function pod(files: Record<string, string>): Promise<string> {
    const root = await mkdtemp(join(tmpdir(), 'molt-pod-'));
    await mkdir(join(root, SERVICE_ACCOUNT_DIR), { recursive: true });
    for (const [name, text] of Object.entries(files))
      await writeFile(join(root, SERVICE_ACCOUNT_DIR, name), text);
    return root;
  }

  it('reads the API server, token file, CA and namespace of the pod', async () => {
    const root = await pod({ token: 't0k3n', 'ca.crt': 'CA', namespace: 'ops\n' });
    process.env['KUBERNETES_SERVICE_HOST'] = 'fd00::1';
    process.env['KUBERNETES_SERVICE_PORT'] = '443';
    try {
      const { kc, namespace } = await loadInClusterKubeConfig(root);
      assert.equal(namespace, 'ops');
      assert.equal(kc.getCurrentCluster()?.server, 'https://[fd00::1]:443');
      assert.equal(kc.getCurrentCluster()?.caFile, join(root, SERVICE_ACCOUNT_DIR, 'ca.crt'));
      assert.deepEqual(
        (kc.getCurrentUser()?.authProvider as { config?: unknown } | undefined)?.config,
        {
          tokenFile: join(root, SERVICE_ACCOUNT_DIR, 'token'),
        },
      );
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('refuses outside a pod, and in a pod without a service account token', async () => {
    Reflect.deleteProperty(process.env, 'KUBERNETES_SERVICE_HOST');
    await assert.rejects(loadInClusterKubeConfig('/nonexistent'), {
      code: 'MOLT_KUBECONFIG_INVALID',
      message: /not running in a pod: KUBERNETES_SERVICE_HOST\/_PORT are not set/,
    });
    const root = await pod({ 'ca.crt': 'CA' });
    process.env['KUBERNETES_SERVICE_HOST'] = '10.0.0.1';
    process.env['KUBERNETES_SERVICE_PORT'] = '443';
    try {
      await assert.rejects(loadInClusterKubeConfig(root), {
        code: 'MOLT_KUBECONFIG_INVALID',
        message: `no kubeconfig given and no service account token: cannot read ${join(root, SERVICE_ACCOUNT_DIR, 'token')}`,
      });
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
