// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../core/errors.ts';
import type { MemberHealth } from './etcd-member.ts';
import { judgeQuorum } from './etcd-quorum.ts';

const m = (name: string, healthy = true, learner = false): MemberHealth => ({
  name,
  id: name,
  healthy,
  learner,
});
const three = [m('a'), m('b'), m('c')];
const judge = (members: MemberHealth[], o: Partial<{ preserve: boolean; force: boolean }> = {}) =>
  judgeQuorum({ self: 'a', members, preserve: o.preserve ?? true, force: o.force ?? false });

describe('judgeQuorum', () => {
  it('allows taking one of three healthy voters down, preserving or not', () => {
    assert.equal(judge(three).ok, true);
    assert.equal(judge(three, { preserve: false }).ok, true);
  });
  it('refuses with QuorumAtRisk when another member is unhealthy, unstarted or a learner, even with force', () => {
    for (const bad of [m('c', false), m('c', true, true), m('(unstarted http://x)', false)]) {
      const r = judge([m('a'), m('b'), bad], { force: true });
      assert.equal(r.ok, false);
      assert.equal(r.code, ErrorCode.QuorumAtRisk);
      assert.match(r.reason ?? '', new RegExp(bad.name.replace(/[()]/g, '.')));
    }
  });
  it('refuses with EtcdUnhealthy when this member is missing or unhealthy', () => {
    assert.equal(judge([m('b'), m('c')]).code, ErrorCode.EtcdUnhealthy);
    assert.equal(judge([m('a', false), m('b'), m('c')]).code, ErrorCode.EtcdUnhealthy);
  });
  it('refuses a 2-member cluster unless forced', () => {
    const r = judge([m('a'), m('b')]);
    assert.equal(r.code, ErrorCode.QuorumAtRisk);
    assert.match(r.reason ?? '', /2-member/);
    assert.equal(judge([m('a'), m('b')], { force: true }).ok, true);
  });
  it('allows a single member only when preserving its data', () => {
    assert.equal(judge([m('a')]).ok, true);
    const r = judge([m('a')], { preserve: false, force: true });
    assert.equal(r.code, ErrorCode.QuorumAtRisk);
    assert.match(r.reason ?? '', /only etcd member/);
  });
});
