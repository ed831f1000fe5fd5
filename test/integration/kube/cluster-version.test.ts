// SPDX-License-Identifier: Apache-2.0
// The cluster version the operator's discovery checks release ranges against: read from
// a real kube-apiserver's /version, in the form core's parseKubernetesVersion takes; and the same
// answer as an agent reads it with its own identity for the kubelet skew check; calls share a
// connection (client-node alone opens one per call).
import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { after, before, describe, it } from 'node:test';
import { parseKubernetesVersion } from '../../../src/core/releases/eligibility.ts';
import { isMoltError } from '../../../src/core/errors.ts';
import { createApiKubeNode } from '../../../src/agent/adapters/kube-node/index.ts';
import { checkKubeletSkew } from '../../../src/core/kubernetes/kubelet-skew.ts';
import {
  apiServerVersion,
  clusterVersion,
  loadKubeConfig,
} from '../../../src/platform/kube/client.ts';
import {
  startKubeControlPlane,
  type KubeControlPlane,
} from '../../../src/lab/services/kube-control-plane.ts';

let cp: KubeControlPlane;
before(async () => {
  cp = await startKubeControlPlane({ nodes: ['node-1'] });
});
after(async () => {
  await cp.stop();
});

describe('the Kubernetes version of a real cluster', () => {
  it('is what the API server reports, a version discovery can check ranges against', async () => {
    const kc = await loadKubeConfig(cp.admin.kubeconfig);
    const version = await clusterVersion(kc);
    assert.match(version, /^v1\.\d+\.\d+/);
    assert.match(parseKubernetesVersion(version), /^1\.\d+\.\d+$/);
  });

  it('is read over one kept connection, however often it is asked', async () => {
    const kc = await loadKubeConfig(cp.admin.kubeconfig);
    let connections = 0;
    const counted = (): void => {
      connections++;
    };
    subscribe('undici:client:connected', counted);
    try {
      for (let i = 0; i < 10; i++) await clusterVersion(kc);
      await Promise.all([clusterVersion(kc), clusterVersion(kc)]);
    } finally {
      unsubscribe('undici:client:connected', counted);
    }
    // One for the sequential calls, at most one more for the pair in flight together.
    assert.ok(connections >= 1 && connections <= 2, `${String(connections)} TLS connections`);
  });

  it('is what an agent reads with its own identity for the kubelet skew check', async () => {
    const kube = await createApiKubeNode(
      {
        kubeconfig: cp.agent('node-1').kubeconfig,
        drain: {
          timeoutSeconds: 60,
          onTimeout: 'abort-and-uncordon',
          deleteEmptyDirData: false,
          force: false,
        },
      },
      { machine: 'node-1' },
    );
    const api = await kube.apiServer?.();
    assert.ok(api !== undefined);
    assert.equal(api.version, await clusterVersion(await loadKubeConfig(cp.admin.kubeconfig)));
    // Not emulating: no emulated minor, or the binary's own.
    if (api.emulatedVersion !== undefined)
      assert.equal(
        `v${api.emulatedVersion}.`,
        api.version.slice(0, api.emulatedVersion.length + 2),
      );
    assert.equal(checkKubeletSkew(api.version, api).ok, true, 'its own kubelet version passes');
  });

  it('fails with a retryable MOLT_KUBE_UNAVAILABLE when the API server is away', async () => {
    const kc = await loadKubeConfig(cp.admin.kubeconfig);
    kc.clusters = kc.clusters.map((c) => ({ ...c, server: 'https://127.0.0.1:1' }));
    await assert.rejects(clusterVersion(kc), (e) => isMoltError(e, 'MOLT_KUBE_UNAVAILABLE'));
    await assert.rejects(apiServerVersion(kc), (e) => isMoltError(e, 'MOLT_KUBE_UNAVAILABLE'));
  });
});
