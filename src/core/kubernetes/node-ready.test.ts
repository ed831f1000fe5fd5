// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { judgeNodeReady } from './node-ready.ts';

const thisBoot = '5678abcd-0000-4000-8000-000000000002';
const lastBoot = '1234abcd-0000-4000-8000-000000000001';
const expect = { node: 'vm-1', bootId: thisBoot, booted: '1.1.0' };

describe("a Node proves this boot's kubelet Ready", () => {
  it('when it is Ready and reports this boot', () => {
    assert.deepEqual(judgeNodeReady({ ready: true, bootId: thisBoot }, expect), { ready: true });
  });

  it('not while it still carries the status of the boot before (Ready within the grace)', () => {
    assert.deepEqual(judgeNodeReady({ ready: true, bootId: lastBoot }, expect), {
      ready: false,
      reason:
        "node vm-1's kubelet has not reported since this boot " +
        '(its Node says boot 1234abcd…, this is 5678abcd…)',
    });
  });

  it("not while this boot's kubelet reports NotReady", () => {
    assert.deepEqual(judgeNodeReady({ ready: false, bootId: thisBoot }, expect), {
      ready: false,
      reason: 'node vm-1 is not Ready yet',
    });
  });

  it('not while it reports another molt release', () => {
    const v = judgeNodeReady({ ready: true, bootId: thisBoot, version: '1.0.0' }, expect);
    assert.deepEqual(v, {
      ready: false,
      reason: 'node vm-1 reports molt 1.0.0, but 1.1.0 is booted',
    });
  });

  it('by its Ready condition alone when the Node reports no boot id', () => {
    for (const bootId of [undefined, '']) {
      assert.deepEqual(judgeNodeReady({ ready: true, bootId }, expect), { ready: true });
      assert.equal(judgeNodeReady({ ready: false, bootId }, expect).ready, false);
    }
  });

  it("not while it runs another kubelet than the booted release's (a v prefix aside)", () => {
    const release = { ...expect, kubelet: 'v1.36.3' };
    const report = { ready: true, bootId: thisBoot, kubeletVersion: 'v1.35.4' };
    assert.deepEqual(judgeNodeReady(report, release), {
      ready: false,
      reason: 'node vm-1 runs kubelet v1.35.4, but the booted release carries v1.36.3',
    });
    assert.deepEqual(judgeNodeReady({ ...report, kubeletVersion: undefined }, release), {
      ready: false,
      reason: 'node vm-1 runs kubelet (none reported), but the booted release carries v1.36.3',
    });
    for (const kubeletVersion of ['v1.36.3', '1.36.3'])
      assert.deepEqual(judgeNodeReady({ ...report, kubeletVersion }, release), { ready: true });
    // A release that names no kubelet (no node runtime) asks nothing of it.
    assert.deepEqual(judgeNodeReady(report, expect), { ready: true });
  });

  it('by its Ready condition alone when the machine knows no boot id', () => {
    const v = judgeNodeReady({ ready: true, bootId: lastBoot }, { node: 'vm-1' });
    assert.deepEqual(v, { ready: true });
  });
});
