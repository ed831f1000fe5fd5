// SPDX-License-Identifier: Apache-2.0
// An image policy reaches only the namespaces it names (docs/adr/0013 decision 1): a workload of
// the same name in another tenant's namespace is neither followed nor made the canary.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, isMoltError, type MoltError } from '../core/errors.ts';
import { policy, REPO, workload } from '../core/images/fixtures.test.ts';
import { isCanary } from '../core/images/plan-input.ts';
import { selectUnits } from '../core/images/units.ts';
import type { ImagePolicy } from '../core/images/types.ts';
import { declaredImagePolicy } from '../operator/adapters/kube-declared/read.ts';
import { declaredImages } from '../operator/decide/declared-named.ts';
import { parseFleet } from './fleet.ts';

const fleet = (item: string): string =>
  `pools: [{name: w}]\nmachines: []\nimages:\n  - {name: web, repository: ${REPO}, follow: rebuilds, ${item}}\n`;

const read = (item: string): ImagePolicy => {
  const p = parseFleet(fleet(item)).images?.[0];
  assert.ok(p !== undefined);
  return p;
};

function refusal(item: string): MoltError {
  try {
    parseFleet(fleet(item), { source: 'fleet.yaml' });
  } catch (e) {
    if (isMoltError(e)) return e;
    throw e;
  }
  assert.fail('the fleet file was accepted');
}

/** Tenant A's `web` and `web-canary`, and tenant B's own `web-canary`. */
const world = [
  workload('web', { namespace: 'tenant-a' }),
  workload('web-canary', { namespace: 'tenant-a' }),
  workload('web-canary', { namespace: 'tenant-b' }),
];

/** The units a policy takes in {@link world}, each with whether it is a canary. */
const taken = (p: ImagePolicy) =>
  selectUnits([p], world).units.map((u) => [u.id, isCanary(p, u)] as const);

describe('the namespaces an image policy reaches', () => {
  it('an ImagePolicy object names its namespaces as a fleet file does: none is refused, not its own namespace', () => {
    const object = (workloads: unknown[]) =>
      declaredImagePolicy({
        metadata: { name: 'web', namespace: 'molt-system', generation: 2 },
        spec: { repository: REPO, follow: 'rebuilds', workloads },
      });
    const bare = object([{ names: ['web', 'web-canary'] }]);
    assert.ok('invalid' in bare, JSON.stringify(bare));
    assert.match(
      bare.invalid,
      /^spec\.workloads\.0: names no namespace.*\(MOLT_IMAGE_POLICY_NAMESPACES\)$/,
    );
    const labels = object([{ matchLabels: { app: 'web' } }]);
    assert.ok(
      'invalid' in labels,
      'matchLabels alone reaches nowhere, not the operator’s namespace',
    );
    const refused = declaredImages({ objects: [bare], file: [], lastAccepted: new Map() });
    assert.deepEqual([...refused.specs.keys()], [], 'nothing of it is in force');
    assert.equal(refused.verdicts[0]?.accepted, false);
    const named = object([{ names: ['tenant-a/web', 'tenant-a/web-canary'] }]);
    assert.ok('policy' in named, JSON.stringify(named));
    assert.deepEqual(taken(named.policy), [
      ['Deployment/tenant-a/web', false],
      ['Deployment/tenant-a/web-canary', false],
    ]);
  });

  it('a fleet file’s policy names its namespaces: none is refused with its own code', () => {
    const e = refusal('workloads: [{names: [web, web-canary]}], canary: {workloads: [web-canary]}');
    assert.equal(e.code, ErrorCode.ImagePolicyNamespaces);
    assert.match(e.message, /images\[0\]\.workloads\[0\]: names no namespace/);
    const labels = refusal('workloads: [{matchLabels: {app: web}}]');
    assert.equal(labels.code, ErrorCode.ImagePolicyNamespaces, 'matchLabels alone reaches nowhere');
  });

  it('takes namespace/name as naming its namespace, and refuses one outside the namespaces given', () => {
    const p = read('workloads: [{names: [tenant-a/web, tenant-a/web-canary]}]');
    assert.deepEqual(p.workloads[0]?.namespaces, ['tenant-a']);
    assert.deepEqual(taken(p), [
      ['Deployment/tenant-a/web', false],
      ['Deployment/tenant-a/web-canary', false],
    ]);
    const e = refusal('workloads: [{namespaces: [tenant-a], names: [tenant-b/web-canary]}]');
    assert.equal(e.code, ErrorCode.ImagePolicyNamespaces);
    assert.match(e.message, /names\[0\]: tenant-b\/web-canary is outside namespaces \(tenant-a\)/);
  });

  it('reaches every namespace only when written, and never takes a bare canary name through it', () => {
    const all = read(
      'workloads: [{namespaces: ["*"], names: [web-canary]}], canary: {workloads: [tenant-a/web-canary]}',
    );
    assert.deepEqual(taken(all), [
      ['Deployment/tenant-a/web-canary', true],
      ['Deployment/tenant-b/web-canary', false],
    ]);
    const bare = refusal('workloads: [{namespaces: ["*"]}], canary: {workloads: [web-canary]}');
    assert.equal(bare.code, ErrorCode.ImagePolicyNamespaces);
    assert.match(bare.message, /canary\.workloads: canary workload web-canary names no namespace/);
    const mixed = refusal('workloads: [{namespaces: ["*", tenant-a]}]');
    assert.match(mixed.message, /namespaces: \* means every namespace: write it alone/);
  });

  it('matches a bare canary name only in the namespaces the policy names itself', () => {
    const p = policy({
      workloads: [{ namespaces: ['tenant-a'] }, { namespaces: ['*'], names: ['web-canary'] }],
      canary: { workloads: ['web-canary'], soakMs: 0 },
    });
    assert.deepEqual(taken(p), [
      ['Deployment/tenant-a/web', false],
      ['Deployment/tenant-a/web-canary', true],
      ['Deployment/tenant-b/web-canary', false],
    ]);
  });
});
