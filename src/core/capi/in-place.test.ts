// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyJsonPatch } from '../../testkit/capi-rule.ts';
import { decideMachine, decideMachineSet, type MachineSide } from './in-place.ts';
import { jsonEqual, machineSpecForDiff } from './spec-match.ts';

const release = (v: string): string | undefined =>
  v.startsWith('v1.35.') ? `molt+k8s${v}` : undefined;

function side(
  spec: Record<string, unknown>,
  infra: Record<string, unknown> = { a: 1 },
): MachineSide {
  return {
    machine: { spec: { clusterName: 'c1', ...spec } },
    infrastructureMachine: { spec: infra },
  };
}

describe('what molt changes in place', () => {
  it('patches a version change so that current becomes desired (CAPI’s rule)', () => {
    const current = side({ version: 'v1.34.2', providerID: 'x://1' });
    const desired = side({ version: 'v1.35.0', providerID: 'x://1' });
    const d = decideMachine(current, desired, release);
    if (d.kind !== 'inPlace') assert.fail(d.reason);
    assert.equal(d.release, 'molt+k8sv1.35.0');
    const patched = applyJsonPatch({ spec: current.machine.spec }, d.patch) as {
      spec: Record<string, unknown>;
    };
    assert.ok(jsonEqual(patched.spec, desired.machine.spec));
  });

  it('adds the version where current has none', () => {
    const d = decideMachine(side({}), side({ version: 'v1.35.0' }), release);
    assert.deepEqual(d.kind === 'inPlace' && d.patch, [
      { op: 'add', path: '/spec/version', value: 'v1.35.0' },
    ]);
  });

  it('ignores the fields CAPI ignores (readinessGates, taints, drain timeouts)', () => {
    const current = side({
      version: 'v1.34.2',
      readinessGates: [{ conditionType: 'A' }],
      deletion: { nodeDrainTimeoutSeconds: 5 },
    });
    const desired = side({ version: 'v1.35.0', taints: [{ key: 'k' }] });
    assert.equal(decideMachine(current, desired, release).kind, 'inPlace');
    assert.deepEqual(machineSpecForDiff({ deletion: { nodeDrainTimeoutSeconds: 1, order: 'x' } }), {
      deletion: { order: 'x' },
    });
  });

  it('offers nothing when anything else changes too, naming it', () => {
    const fd = decideMachine(
      side({ version: 'v1.34.2' }),
      side({ version: 'v1.35.0', failureDomain: 'b' }),
      release,
    );
    assert.deepEqual(fd.kind === 'replace' && /Machine spec\.failureDomain/.test(fd.reason), true);
    const infra = decideMachine(
      side({ version: 'v1.34.2' }),
      side({ version: 'v1.35.0' }, { a: 2 }),
      release,
    );
    assert.deepEqual(
      infra.kind === 'replace' && /InfrastructureMachine spec/.test(infra.reason),
      true,
    );
  });

  it('offers nothing without a molt release for the version, or without a version change', () => {
    assert.equal(
      decideMachine(side({ version: 'v1.34.2' }), side({ version: 'v1.36.0' }), release).kind,
      'replace',
    );
    assert.equal(
      decideMachine(side({ version: 'v1.35.0' }), side({ version: 'v1.35.0' }), release).kind,
      'replace',
    );
    assert.equal(decideMachine(side({ version: 'v1.35.0' }), side({}), release).kind, 'replace');
  });

  it('patches a MachineSet’s template version, comparing templates’ spec.template.spec only', () => {
    const ms = (version: string, replicas: number) => ({
      machineSet: { spec: { replicas, template: { spec: { clusterName: 'c1', version } } } },
      infrastructureMachineTemplate: { spec: { template: { spec: { a: 1 } } } },
    });
    const d = decideMachineSet(ms('v1.34.2', 1), ms('v1.35.0', 0), release);
    assert.deepEqual(d.kind === 'inPlace' && d.patch, [
      { op: 'replace', path: '/spec/template/spec/version', value: 'v1.35.0' },
    ]);
  });
});
