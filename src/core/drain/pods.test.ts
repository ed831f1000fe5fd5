// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  decideDrain,
  defaultDrainPolicy,
  keepsEmptyDirData,
  podName,
  SafeToEvictLocalVolumes,
  type PodFacts,
} from './pods.ts';

const pod = (
  name: string,
  o: Partial<PodFacts> & { readonly unmanaged?: boolean } = {},
): PodFacts => {
  const { unmanaged, ...rest } = o;
  const base: PodFacts = {
    namespace: 'apps',
    name,
    uid: `uid-${name}`,
    mirror: false,
    phase: 'Running',
    terminating: false,
    emptyDir: false,
    ...rest,
  };
  return unmanaged === true ? base : { controllerKind: 'ReplicaSet', ...base };
};

const names = (ps: readonly { pod: PodFacts }[]) => ps.map((p) => podName(p.pod));

describe('deciding a drain', () => {
  const pods = [
    pod('web'),
    pod('db-0', { controllerKind: 'StatefulSet' }),
    pod('fluentd', { controllerKind: 'DaemonSet' }),
    pod('static', { mirror: true, controllerKind: 'Node' }),
    pod('job-done', { controllerKind: 'Job', phase: 'Succeeded' }),
    pod('leaving', { terminating: true }),
    pod('scratch', { emptyDir: true }),
    pod('bare', { unmanaged: true }),
  ];

  it('evicts managed pods, skips DaemonSet, mirror, finished and terminating ones', () => {
    const d = decideDrain(pods, defaultDrainPolicy);
    assert.deepEqual(d.evict.map(podName), ['apps/web', 'apps/db-0']);
    assert.deepEqual(names(d.skip), [
      'apps/fluentd',
      'apps/static',
      'apps/job-done',
      'apps/leaving',
    ]);
  });

  it('refuses emptyDir and unmanaged pods unless the policy allows them, saying how', () => {
    const d = decideDrain(pods, defaultDrainPolicy);
    assert.deepEqual(names(d.refuse), ['apps/scratch', 'apps/bare']);
    assert.match(d.refuse[0]?.reason ?? '', /deleteEmptyDirData: true/);
    assert.match(d.refuse[1]?.reason ?? '', /force: true/);
    const lenient = decideDrain(pods, {
      ...defaultDrainPolicy,
      deleteEmptyDirData: true,
      force: true,
    });
    assert.deepEqual(lenient.refuse, []);
    assert.deepEqual(lenient.evict.map(podName), [
      'apps/web',
      'apps/db-0',
      'apps/scratch',
      'apps/bare',
    ]);
  });

  it('counts only the emptyDir volumes a pod did not declare disposable by annotation', () => {
    const volumes = [
      { name: 'tmp', emptyDir: {} },
      { name: 'cache', emptyDir: {} },
      { name: 'cfg' },
    ];
    assert.equal(keepsEmptyDirData(volumes, undefined), true);
    assert.equal(keepsEmptyDirData(volumes, { [SafeToEvictLocalVolumes]: 'tmp' }), true);
    assert.equal(keepsEmptyDirData(volumes, { [SafeToEvictLocalVolumes]: ' tmp, cache ' }), false);
    assert.equal(keepsEmptyDirData([{ name: 'cfg' }], undefined), false);
    // Naming a volume the pod does not have declares nothing about the ones it has.
    assert.equal(keepsEmptyDirData(volumes, { [SafeToEvictLocalVolumes]: 'cfg,other' }), true);
  });
});
