// SPDX-License-Identifier: Apache-2.0
// Cluster API as a machine provider (docs/adr/0014 decision 6) over the fake Machines: replace
// remediates the one Machine mapped to the molt machine (annotation or providerID, never the name)
// once and answers the same operation when asked again; status follows CAPI from the old Machine
// to a new one with a Node; refusals and transport failures are the provider errors.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, isMoltError, MoltError } from '../../../core/errors.ts';
import { FakeCapiMachines } from '../../ports/capi-machines.fake.ts';
import type { MachineRecord } from '../../ports/store.ts';
import { createCapiProvider } from './index.ts';

const w1: MachineRecord = {
  id: 'w-1',
  endpoint: 'https://127.0.0.1:1',
  role: 'worker',
  pool: 'md',
  labels: {},
};
const request = { image: 'reg/molt@sha256:bb', digest: 'sha256:bb', version: '1.1.0' };
const byAnnotation = { annotations: { 'molt.dev/machine': 'w-1' } };
/** Cluster c1 in ns1 and in ns2 holds pool md's Machines (the fake's Machines are in Cluster c1). */
const clusters = { 'ns1/c1': ['md'], 'ns2/c1': ['md'] };

const failed = (what: RegExp) => (e: unknown) =>
  isMoltError(e, ErrorCode.ProviderFailed) && what.test(e.message);

describe('Cluster API as the machine provider', () => {
  it('remediates the one mapped worker Machine once, and answers the same operation again', async () => {
    const fake = new FakeCapiMachines();
    fake.add('other/w-1'); // named like the molt machine, mapped to nothing: left alone
    fake.add('ns1/md-abc', { ...byAnnotation, uid: 'u1', nodeRef: 'node-a' });
    const provider = createCapiProvider(fake, clusters);
    const op = await provider.replace(w1, request);
    assert.deepEqual(op, { operationId: 'capi:ns1/md-abc/u1' });
    assert.deepEqual(fake.remediations, [{ machine: 'ns1/md-abc', how: 'deleted' }]);
    assert.deepEqual(await provider.replace(w1, request), op);
    assert.equal(fake.remediations.length, 1);
    // Another operator (or this one restarted) asks while CAPI deletes it: the same operation.
    fake.machine('ns1/md-abc').deleted = false;
    fake.machine('ns1/md-abc').deleting = true;
    assert.deepEqual(await createCapiProvider(fake, clusters).replace(w1, request), op);
    assert.equal(fake.remediations.length, 1);
    assert.equal(fake.machines.get('other/w-1')?.deleted, false);
  });

  it('annotates a control-plane Machine mapped by providerID for KCP', async () => {
    const fake = new FakeCapiMachines();
    fake.add('ns2/cp-0', { providerID: 'molt://w-1', controlPlane: true, uid: 'u9' });
    const op = await createCapiProvider(fake, clusters).replace(w1, request);
    assert.equal(op.operationId, 'capi:ns2/cp-0/u9');
    assert.deepEqual(fake.remediations, [{ machine: 'ns2/cp-0', how: 'annotated' }]);
    assert.equal(fake.machine('ns2/cp-0').annotations['cluster.x-k8s.io/remediate-machine'], '');
  });

  it('is running while the old Machine is there, succeeded once a new one maps with a Node', async () => {
    const fake = new FakeCapiMachines();
    fake.add('ns1/md-abc', { ...byAnnotation, uid: 'u1', nodeRef: 'node-a' });
    const provider = createCapiProvider(fake, clusters);
    const { operationId } = await provider.replace(w1, request);
    fake.machine('ns1/md-abc').deleted = false;
    fake.machine('ns1/md-abc').deleting = true;
    assert.deepEqual(await provider.status(w1, operationId), {
      state: 'running',
      message: 'Cluster API is replacing Machine ns1/md-abc',
    });
    fake.machines.delete('ns1/md-abc');
    const waiting = {
      state: 'running',
      message: 'waiting for the replacement Machine to map to w-1',
    };
    assert.deepEqual(await provider.status(w1, operationId), waiting);
    // The new Machine maps to the molt machine, but has no Node yet; one only named w-1 never counts.
    fake.add('ns1/w-1', { uid: 'u3', nodeRef: 'node-x' });
    fake.add('ns1/md-def', { providerID: 'molt://w-1', uid: 'u2' });
    assert.deepEqual(await provider.status(w1, operationId), waiting);
    fake.machine('ns1/md-def').nodeRef = 'node-b';
    const done = await provider.status(w1, operationId);
    assert.equal(done.state, 'succeeded');
    assert.match(done.message ?? '', /ns1\/md-def \(node node-b\) replaced ns1\/md-abc/);
  });

  it('refuses when no Machine maps to the machine (not by name) or several do', async () => {
    const fake = new FakeCapiMachines();
    fake.add('default/w-1', { providerID: 'aws:///i-1' });
    const provider = createCapiProvider(fake, clusters);
    await assert.rejects(
      provider.replace(w1, request),
      failed(
        /no Cluster API Machine maps to w-1 \(annotation molt\.dev\/machine or providerID molt:\/\/w-1, in a Cluster capi\.clusters maps to its pool\)/,
      ),
    );
    fake.add('ns1/a', byAnnotation);
    fake.add('ns2/b', { providerID: 'molt://w-1' });
    await assert.rejects(
      provider.replace(w1, request),
      failed(/2 Cluster API Machines map to w-1: ns1\/a, ns2\/b/),
    );
    assert.deepEqual(fake.remediations, []);
  });

  it("counts only Machines of a Cluster mapped to the machine's pool: decoys neither block nor finish a replace", async () => {
    const fake = new FakeCapiMachines();
    // Annotated with w-1 by whoever may create Machines: another namespace, another Cluster.
    fake.add('tenant-a/decoy', { ...byAnnotation, uid: 'd1', nodeRef: 'node-d' });
    fake.add('ns1/decoy', { ...byAnnotation, clusterName: 'c2', uid: 'd2', nodeRef: 'node-e' });
    fake.add('ns1/md-abc', { ...byAnnotation, uid: 'u1', nodeRef: 'node-a' });
    const provider = createCapiProvider(fake, clusters);
    const { operationId } = await provider.replace(w1, request);
    assert.equal(operationId, 'capi:ns1/md-abc/u1', 'the decoys did not make it "2 Machines"');
    assert.deepEqual(fake.remediations, [{ machine: 'ns1/md-abc', how: 'deleted' }]);
    // The old Machine is gone; the decoys (with Nodes) are no replacement.
    fake.machines.delete('ns1/md-abc');
    assert.equal((await provider.status(w1, operationId)).state, 'running');
    fake.add('ns1/md-def', { providerID: 'molt://w-1', uid: 'u2', nodeRef: 'node-b' });
    assert.equal((await provider.status(w1, operationId)).state, 'succeeded');
    // Only decoys map: nothing to replace, nothing remediated.
    const alone = new FakeCapiMachines();
    alone.add('tenant-a/decoy', { ...byAnnotation, uid: 'd1' });
    await assert.rejects(
      createCapiProvider(alone, clusters).replace(w1, request),
      failed(/no Cluster API Machine maps to w-1/),
    );
    assert.deepEqual(alone.remediations, []);
  });

  it('makes transport failures retryable and refusals final', async () => {
    const fake = new FakeCapiMachines();
    fake.add('ns1/md-abc', byAnnotation);
    const down = new MoltError(ErrorCode.CapiWriteFailed, 'could not list: ECONNREFUSED', {
      retryable: true,
    });
    const provider = createCapiProvider(
      {
        remediate: (ref) => fake.remediate(ref),
        find: () => Promise.reject(down),
      },
      clusters,
    );
    await assert.rejects(
      provider.replace(w1, request),
      (e: unknown) => isMoltError(e, ErrorCode.ProviderUnreachable) && e.retryable,
    );
    await assert.rejects(
      provider.status(w1, 'capi:ns1/md-abc/u1'),
      (e: unknown) => isMoltError(e, ErrorCode.ProviderUnreachable) && e.retryable,
    );
    fake.fail = true;
    await assert.rejects(
      createCapiProvider(fake, clusters).replace(w1, request),
      (e: unknown) => isMoltError(e, ErrorCode.ProviderFailed) && !e.retryable,
    );
    await assert.rejects(
      createCapiProvider(new FakeCapiMachines(), clusters).status(w1, 'op-7'),
      failed(/not a Cluster API replace/),
    );
  });
});
