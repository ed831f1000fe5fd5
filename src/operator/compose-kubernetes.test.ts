// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubernetesClusterSpec } from '../protocol/kube-cluster.ts';
import { liveKubernetes } from './compose-kubernetes.ts';
import type { LoadedConfig } from './config.ts';

/** Only what `liveKubernetes` reads of a loaded config. */
const config = (readsObjects: boolean): LoadedConfig =>
  ({
    fleet: {
      clusters: [{ name: 'file', kubernetes: KubernetesClusterSpec.parse({ version: 'v1.35.4' }) }],
    },
    config: readsObjects ? { kubernetes: { declared: true } } : {},
  }) as unknown as LoadedConfig;

describe('the live declared Kubernetes', () => {
  it('is unread until the declared runner’s first pass when the operator reads molt.dev objects', () => {
    const live = liveKubernetes(config(true));
    assert.equal(live.declared().read, false);
    assert.deepEqual([...live.declared().specs.keys()], ['file']);
    const objects = new Map([['obj', KubernetesClusterSpec.parse({ version: 'v1.36.3' })]]);
    live.setKubernetes(objects);
    assert.equal(live.declared().read, true);
    assert.deepEqual([...live.declared().specs.keys()], ['obj']);
  });

  it('is read from the start when the fleet file is the only declared source', () => {
    const live = liveKubernetes(config(false));
    assert.equal(live.declared().read, true);
    assert.equal(live.declared().specs.get('file')?.version, 'v1.35.4');
  });
});
