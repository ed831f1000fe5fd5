// SPDX-License-Identifier: Apache-2.0
// What image policies would do (docs/adr/0013 §3, §8), on a real control plane and a real
// registry — the operator's own parts: the Workloads adapter as molt-operator under the shipped
// RBAC, the image scanner over a registry client per host (`compose-images.ts`), observeImages.
// A rebuild pushed behind the intermediate tag is a move to its digest; a GM digest is skipped;
// a repository on a registry that is not there waits with its code; a warm re-scan GETs nothing.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { AppsV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import {
  startKubeControlPlane,
  type KubeControlPlane,
} from '../../../src/lab/services/kube-control-plane.ts';
import { buildImage, createRegistryClient, pushImage } from '../../../src/oci/index.ts';
import { createKubeWorkloads } from '../../../src/operator/adapters/kube-workloads/index.ts';
import { repositoryScanner } from '../../../src/operator/compose-images.ts';
import type { LoadedConfig } from '../../../src/operator/config.ts';
import { observeImages } from '../../../src/operator/images/observe.ts';
import { loadKubeConfig } from '../../../src/platform/kube/client.ts';
import { ImagesView } from '../../../src/protocol/operator-images.ts';
import { startRegistry, type TestRegistry } from '../../../src/testkit/registry-process.ts';
import type { ImagePolicy } from '../../../src/core/images/types.ts';

let cp: KubeControlPlane;
let registry: TestRegistry;
let admin: KubeConfig;
let operator: KubeConfig;

const build = (n: string) => buildImage({ labels: { build: n } });

async function deployment(namespace: string, name: string, image: string): Promise<void> {
  await admin
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: namespace } } })
    .catch(() => undefined);
  await admin.makeApiClient(AppsV1Api).createNamespacedDeployment({
    namespace,
    body: {
      metadata: { name },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name } },
          spec: { containers: [{ name: 'web', image }] },
        },
      },
    },
  });
}

describe('observing image policies on a real control plane', () => {
  before(async () => {
    [cp, registry] = await Promise.all([startKubeControlPlane(), startRegistry()]);
    admin = await loadKubeConfig(cp.admin.kubeconfig);
    await promisify(execFile)(join(cp.bins, 'kubectl'), [
      ...['--kubeconfig', cp.admin.kubeconfig, 'apply', '-f'],
      join(import.meta.dirname, '../../../deploy/kubernetes/operator-rbac.yaml'),
    ]);
    operator = await loadKubeConfig(cp.operator.kubeconfig);
  });
  after(async () => {
    await cp.stop();
    await registry.stop();
  });

  it('moves a rebuild, keeps a GM digest, and waits on a registry that is not there', async () => {
    const client = createRegistryClient({ registry: registry.host, insecure: true });
    const b1 = await pushImage(
      client,
      'acme/web',
      ['1.8.0', '1.8.0-rev2', '1.8.0-rev2-b1'],
      build('1'),
    );
    const repo = `${registry.host}/acme/web`;
    await deployment('shop', 'web', `${repo}:1.8.0-rev2@${b1}`);
    await deployment('shop', 'web-gm', `${repo}:1.8.0-rev2-b1@${b1}`);
    await deployment('edge', 'proxy', '127.0.0.1:9/acme/proxy:2.0.0-rev1');
    const b2 = await pushImage(
      client,
      'acme/web',
      ['1.8.0', '1.8.0-rev2', '1.8.0-rev2-b2'],
      build('2'),
    );
    await client.close();

    const policies: ImagePolicy[] = [
      {
        name: 'web',
        repository: repo,
        follow: { kind: 'rebuilds' },
        workloads: [{ namespaces: ['shop'], names: ['web'] }],
        policies: [],
        gm: [],
      },
      {
        name: 'web-gm',
        repository: repo,
        follow: { kind: 'rebuilds' },
        workloads: [{ namespaces: ['shop'], names: ['web-gm'] }],
        policies: [],
        gm: [{ digest: b1, reason: 'the GM of SP1' }],
      },
      {
        name: 'proxy',
        repository: '127.0.0.1:9/acme/proxy',
        follow: { kind: 'rebuilds' },
        workloads: [{ namespaces: ['edge'] }],
        policies: [],
        gm: [],
      },
    ];
    const config = {
      config: { registry: 'registry.example.com', insecure: false },
    } as unknown as LoadedConfig;
    const deps = {
      policies: () => policies,
      workloads: createKubeWorkloads({ kc: operator }),
      scan: repositoryScanner(config),
      now: () => Date.now(),
    };
    const view = ImagesView.parse(await observeImages(deps));
    const [web, gm, proxy] = view.policies;
    assert.deepEqual(web?.units[0]?.decision, {
      kind: 'move',
      tag: '1.8.0-rev2',
      digest: b2,
      image: `${repo}:1.8.0-rev2@${b2}`,
      from: b1,
    });
    assert.equal(web.units[0].id, 'Deployment/shop/web');
    assert.equal(gm?.units[0]?.decision.reason, 'GMPinned');
    assert.equal(gm.units[0].decision.digest, b2);
    assert.equal(proxy?.units[0]?.decision.kind, 'wait');
    assert.match(proxy.units[0].decision.reason ?? '', /^MOLT_REGISTRY_/);
    assert.match(proxy.scan?.error ?? '', /^MOLT_REGISTRY_/);
    assert.deepEqual(view.platforms, []);

    // The scanner is the operator's: a warm call resolves the tags by HEAD only.
    const scans: number[] = [];
    const again = await observeImages({
      ...deps,
      scan: async (r) => {
        const s = await deps.scan(r);
        if (r === repo) scans.push(s.requests.manifestGet);
        return s;
      },
    });
    assert.equal(again.policies[0]?.units[0]?.decision.kind, 'move');
    assert.deepEqual(scans, [0]);
  });
});
