// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { IMember } from 'etcd3';
import { ErrorCode } from '../../../core/errors.ts';
import { decimalId, hexId, memberView } from './member-ids.ts';

const member = (o: Partial<IMember>): IMember => ({
  ID: '10276657743932975437',
  name: 'cp-1',
  peerURLs: ['http://127.0.0.1:2380'],
  clientURLs: ['http://127.0.0.1:2379'],
  isLearner: false,
  ...o,
});

describe('etcd member ids and views', () => {
  it('shows ids in hex as etcdctl does, and reads them back', () => {
    assert.equal(hexId('10276657743932975437'), '8e9e05c52164694d');
    assert.equal(decimalId('8e9e05c52164694d'), '10276657743932975437');
    assert.equal(decimalId('8E9E05C52164694D'), '10276657743932975437');
  });

  it('refuses what is not a hex id', () => {
    for (const bad of ['', 'xyz', '8e9e05c52164694d0', '0x12', '-1'])
      assert.throws(() => decimalId(bad), { code: ErrorCode.BadInput }, bad);
  });

  it('marks the leader, learners and this machine’s own member (by name, or peer URL before it started)', () => {
    const self = { name: 'cp-1', peerUrl: 'http://127.0.0.1:2380' };
    const leader = member({});
    assert.deepEqual(memberView(leader, leader.ID, self), {
      id: '8e9e05c52164694d',
      name: 'cp-1',
      peerUrls: ['http://127.0.0.1:2380'],
      clientUrls: ['http://127.0.0.1:2379'],
      isLeader: true,
      isLearner: false,
      self: true,
    });
    const unstarted = member({ ID: '1', name: '', clientURLs: [], isLearner: true });
    assert.equal(memberView(unstarted, '0', self).self, true);
    assert.equal(memberView(unstarted, '0', self).isLeader, false);
    const other = member({ ID: '2', name: 'cp-2', peerURLs: ['http://127.0.0.1:2381'] });
    assert.equal(memberView(other, leader.ID, self).self, false);
  });
});
