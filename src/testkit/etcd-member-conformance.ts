// SPDX-License-Identifier: Apache-2.0
/**
 * What every {@link EtcdMember} must do (docs/adr/0004 §5), run against the fake and against a
 * real 3-member etcd cluster: quorum judgement with all members up, one down, and two left;
 * idempotent leave; rejoin as a new member back to a healthy 3-member cluster.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../protocol/index.ts';
import type { EtcdMember } from '../agent/ports/etcd-member.ts';
import { eventually } from '../platform/process/managed-process.ts';
import { rejectsWithCode } from './registry-conformance.ts';

/** A 3-member cluster the suite can run against; its tests run in order on one cluster. */
export interface EtcdMemberTarget {
  readonly name: string;
  start(): Promise<{
    /** Member names, in index order. */
    readonly names: readonly string[];
    member(index: number): EtcdMember;
    /** Stop member `index`'s etcd process (as StopServices does) or start it again. */
    down(index: number): Promise<void>;
    up(index: number): Promise<void>;
    stop(): Promise<void>;
  }>;
}

const keep = { preserve: true, force: false } as const;

export function etcdMemberConformance(target: EtcdMemberTarget): void {
  describe(`etcd member conformance: ${target.name}`, () => {
    let env: Awaited<ReturnType<EtcdMemberTarget['start']>>;
    const healthy = async (i: number): Promise<void> => {
      await eventually(
        async () => {
          const h = await env.member(i).healthy();
          assert.ok(h.healthy, `${h.name}: ${h.message ?? ''}`);
        },
        { timeoutMs: 20_000, intervalMs: 200 },
      );
    };
    before(async () => {
      env = await target.start();
    });
    after(async () => {
      await env.stop();
    });

    it('allows taking one member of a healthy 3-member cluster down, preserving or not', async () => {
      const report = await env.member(0).checkQuorum(keep);
      assert.equal(report.ok, true, report.reason);
      assert.deepEqual(report.members.map((m) => m.name).sort(), [...env.names].sort());
      assert.ok(report.members.every((m) => m.healthy && !m.learner));
      assert.equal((await env.member(0).checkQuorum({ preserve: false, force: false })).ok, true);
      const h = await env.member(1).healthy();
      assert.deepEqual([h.name, h.healthy, h.learner], [env.names[1], true, false]);
    });

    it('refuses while another member is down, even with force, and reports that member unhealthy', async () => {
      await env.down(2);
      const report = await env.member(0).checkQuorum({ preserve: true, force: true });
      assert.equal(report.ok, false);
      assert.equal(report.code, ErrorCode.QuorumAtRisk);
      assert.ok(report.reason?.includes(env.names[2] ?? '?'), report.reason);
      assert.equal(report.members.find((m) => m.name === env.names[2])?.healthy, false);
      assert.equal((await env.member(2).healthy()).healthy, false);
      await env.up(2);
      await healthy(2);
      assert.equal((await env.member(0).checkQuorum(keep)).ok, true);
    });

    it('refuses a 2-member cluster unless forced, after a member left (leave is idempotent)', async () => {
      await env.down(2);
      await env.member(2).leave();
      await env.member(2).leave();
      const report = await env.member(0).checkQuorum(keep);
      assert.equal(report.members.length, 2);
      assert.equal(report.ok, false);
      assert.equal(report.code, ErrorCode.QuorumAtRisk);
      assert.match(report.reason ?? '', /2-member/);
      assert.equal((await env.member(1).checkQuorum({ preserve: true, force: true })).ok, true);
      assert.equal((await env.member(2).healthy()).healthy, false);
    });

    it('refuses to restart a removed member in place', async () => {
      // The real adapter may learn it from etcd exiting at start, or from the member list.
      await rejectsWithCode(env.member(2).rejoin({ asNewMember: false }), ErrorCode.EtcdUnhealthy);
      await env.down(2);
    });

    it('rejoins a member that left as a new member, back to a healthy 3-member cluster', async () => {
      await env.member(2).rejoin({ asNewMember: true });
      const h = await env.member(2).healthy();
      assert.deepEqual([h.healthy, h.learner], [true, false]);
      await env.member(2).rejoin({ asNewMember: true }); // idempotent: already a voter with data
      const report = await env.member(0).checkQuorum({ preserve: false, force: false });
      assert.equal(report.ok, true, report.reason);
      assert.equal(report.members.length, 3);
    });
  });
}
