// SPDX-License-Identifier: Apache-2.0
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../errors.ts';
import { dig, policy, REPO, workload } from './fixtures.test.ts';
import { conflictError, selectUnits } from './units.ts';

const image = `${REPO}:1.8.0-rev2@${dig(1)}`;
const sidecar = { name: 'proxy', image: `registry.example.com/acme/proxy:2.0.0-rev1` };

describe('selectUnits', () => {
  it('takes the containers in the repository of workloads a selector matches', () => {
    const w = workload('web', {
      containers: [{ name: 'migrate', image, init: true }, { name: 'web', image }, sidecar],
    });
    const other = workload('api', { namespace: 'billing' });
    const s = selectUnits([policy()], [w, other]);
    assert.deepEqual(
      s.units.map((u) => [u.id, u.policy, u.containers]),
      [['Deployment/shop/web', 'web', ['migrate', 'web']]],
    );
    assert.deepEqual(s.conflicts, []);
    assert.deepEqual(s.empty, []);
  });

  it('requires every field of a selector, and any one selector', () => {
    const ws = [
      workload('a', { labels: { tier: 'front' } }),
      workload('b', { labels: { tier: 'back' } }),
      workload('c', { kind: 'DaemonSet', labels: { tier: 'front' } }),
      workload('d', { namespace: 'ops', labels: { tier: 'front' } }),
    ];
    const p = policy({
      workloads: [
        { namespaces: ['shop'], matchLabels: { tier: 'front' }, kinds: ['Deployment'] },
        { namespaces: ['ops'], names: ['d'], containers: ['web'] },
        { namespaces: ['shop'], names: ['b'], containers: ['sidecar'] },
      ],
    });
    assert.deepEqual(
      selectUnits([p], ws).units.map((u) => u.id),
      ['Deployment/shop/a', 'Deployment/ops/d'],
    );
  });

  it('refuses a container two policies select, naming both; neither takes it', () => {
    const w = workload('web', {
      containers: [
        { name: 'web', image },
        { name: 'web2', image },
      ],
    });
    const a = policy({ name: 'a' });
    const b = policy({ name: 'b', workloads: [{ namespaces: ['shop'], containers: ['web'] }] });
    const s = selectUnits([a, b], [w]);
    assert.deepEqual(s.conflicts, [
      { unit: 'Deployment/shop/web', container: 'web', policies: ['a', 'b'] },
    ]);
    assert.deepEqual(
      s.units.map((u) => [u.policy, u.containers]),
      [['a', ['web2']]],
    );
    const e = conflictError(s.conflicts[0]!);
    assert.equal(e.code, ErrorCode.ImagePolicyConflict);
    assert.match(e.message, /web of Deployment\/shop\/web .* a and b/);
    assert.ok(e.hint !== undefined);
  });

  it('reports policies that select nothing, and skips images it cannot read', () => {
    const w = workload('web', { containers: [{ name: 'web', image: 'nginx:1.27' }] });
    const s = selectUnits(
      [policy(), policy({ name: 'other', repository: 'registry.example.com/x' })],
      [w],
    );
    assert.deepEqual(s.units, []);
    assert.deepEqual(s.empty, ['web', 'other']);
  });
});
