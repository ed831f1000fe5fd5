// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { WorkloadKind } from './types.ts';
import { workloadProgress } from './workload-progress.ts';

const meta = { name: 'web', namespace: 'apps', generation: 2 };

const deploy = (status: object, spec: object = { replicas: 3 }) => ({
  metadata: meta,
  spec,
  status,
});
const daemon = (status: object) => ({ metadata: meta, spec: {}, status });
const sts = (status: object, spec: object = { replicas: 3 }) => ({ metadata: meta, spec, status });

const done = { observedGeneration: 2, replicas: 3, updatedReplicas: 3, availableReplicas: 3 };
const deadline = {
  type: 'Progressing',
  status: 'False',
  reason: 'ProgressDeadlineExceeded',
  message: 'ReplicaSet "web-1" has timed out progressing.',
};
const dsDone = {
  observedGeneration: 2,
  desiredNumberScheduled: 2,
  updatedNumberScheduled: 2,
  numberAvailable: 2,
};
const stsDone = {
  observedGeneration: 2,
  replicas: 3,
  readyReplicas: 3,
  updatedReplicas: 3,
  currentRevision: 'web-2',
  updateRevision: 'web-2',
};

const cases: [string, WorkloadKind, unknown, string][] = [
  ['Deployment rolled out', 'Deployment', deploy(done), 'available'],
  [
    'Deployment spec not observed yet',
    'Deployment',
    deploy({ ...done, observedGeneration: 1 }),
    'progressing',
  ],
  [
    'Deployment never observed (no status)',
    'Deployment',
    { metadata: meta, spec: {} },
    'progressing',
  ],
  [
    'Deployment new replicas still coming',
    'Deployment',
    deploy({ ...done, updatedReplicas: 2 }),
    'progressing',
  ],
  [
    'Deployment old replicas not gone',
    'Deployment',
    deploy({ ...done, replicas: 4 }),
    'progressing',
  ],
  [
    'Deployment updated but not available',
    'Deployment',
    deploy({ ...done, availableReplicas: 2 }),
    'progressing',
  ],
  [
    'Deployment default replicas is 1',
    'Deployment',
    deploy({ observedGeneration: 2, replicas: 1, updatedReplicas: 1, availableReplicas: 1 }, {}),
    'available',
  ],
  [
    'Deployment scaled to zero',
    'Deployment',
    deploy({ observedGeneration: 2 }, { replicas: 0 }),
    'available',
  ],
  [
    'Deployment past its deadline',
    'Deployment',
    deploy({ ...done, updatedReplicas: 1, conditions: [deadline] }),
    'failed',
  ],
  [
    'Deployment deadline of an unobserved spec is stale',
    'Deployment',
    deploy({ ...done, observedGeneration: 1, conditions: [deadline] }),
    'progressing',
  ],
  ['DaemonSet rolled out', 'DaemonSet', daemon(dsDone), 'available'],
  [
    'DaemonSet not observed',
    'DaemonSet',
    daemon({ ...dsDone, observedGeneration: 1 }),
    'progressing',
  ],
  [
    'DaemonSet not all updated',
    'DaemonSet',
    daemon({ ...dsDone, updatedNumberScheduled: 1 }),
    'progressing',
  ],
  [
    'DaemonSet updated, not available',
    'DaemonSet',
    daemon({ ...dsDone, numberAvailable: 1 }),
    'progressing',
  ],
  ['StatefulSet rolled out', 'StatefulSet', sts(stsDone), 'available'],
  [
    'StatefulSet not observed',
    'StatefulSet',
    sts({ ...stsDone, observedGeneration: 1 }),
    'progressing',
  ],
  ['StatefulSet not ready', 'StatefulSet', sts({ ...stsDone, readyReplicas: 2 }), 'progressing'],
  [
    'StatefulSet revisions differ, pods not updated',
    'StatefulSet',
    sts({ ...stsDone, updatedReplicas: 1, currentRevision: 'web-1' }),
    'progressing',
  ],
  [
    'StatefulSet all updated before currentRevision moves',
    'StatefulSet',
    sts({ ...stsDone, currentRevision: 'web-1' }),
    'available',
  ],
  [
    'StatefulSet partition reached',
    'StatefulSet',
    sts(
      { ...stsDone, updatedReplicas: 1, currentRevision: 'web-1' },
      { replicas: 3, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } },
    ),
    'available',
  ],
  [
    'StatefulSet partition not reached',
    'StatefulSet',
    sts(
      { ...stsDone, updatedReplicas: 0, currentRevision: 'web-1' },
      { replicas: 3, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } },
    ),
    'progressing',
  ],
  ['not an object at all', 'Deployment', 'nonsense', 'progressing'],
];

describe('workloadProgress, as kubectl rollout status reads a workload', () => {
  for (const [name, kind, object, state] of cases)
    it(name, () => {
      assert.equal(workloadProgress(kind, object).state, state);
    });

  it('says why a Deployment failed and why one is still progressing', () => {
    const failed = workloadProgress('Deployment', deploy({ ...done, conditions: [deadline] }));
    assert.deepEqual(failed, {
      state: 'failed',
      reason: 'ProgressDeadlineExceeded',
      message:
        'Deployment/apps/web exceeded its progress deadline: ReplicaSet "web-1" has timed out progressing.',
    });
    const p = workloadProgress('Deployment', deploy({ ...done, availableReplicas: 1 }));
    assert.deepEqual(p, { state: 'progressing', message: '1 of 3 updated replicas available' });
  });
});
