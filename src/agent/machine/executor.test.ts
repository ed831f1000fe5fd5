// SPDX-License-Identifier: Apache-2.0
// The etcd steps before any disruption (the upgrade lease, the quorum check) outlast a member that
// answers slowly for a few seconds: a retryable failure is tried again, twice, before the machine
// fails — on a control-plane VM under load one timed-out lease read once failed the machine and
// halted its rollout. A lease another machine holds, and any other failure, fail at once.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { ClusterLease } from '../ports/cluster-lease.ts';
import { EtcdStepAttempts, execute, type ExecutionContext } from './executor.ts';
import type { MachinePorts } from './ports.ts';

const timedOut = () =>
  new MoltError(ErrorCode.TimedOut, 'etcd: reading the upgrade lease timed out', {
    retryable: true,
  });

/** Ports with only a lease that fails with `failures` in turn, then takes; and a still clock. */
function leasePorts(failures: readonly MoltError[]) {
  const slept: number[] = [];
  const left = [...failures];
  let calls = 0;
  const lease = {
    acquire: () => {
      calls++;
      const e = left.shift();
      return e === undefined ? Promise.resolve() : Promise.reject(e);
    },
  } as unknown as ClusterLease;
  const clock = {
    now: () => 0,
    sleep: (ms: number) => {
      slept.push(ms);
      return Promise.resolve();
    },
  };
  const ports = { lease, clock } as unknown as MachinePorts;
  return { ports, slept, calls: () => calls };
}

const ctx = (lines: string[]): ExecutionContext => ({
  op: undefined,
  log: (l) => lines.push(l),
  progress: () => undefined,
});

const acquire = { type: 'AcquireLease', operationId: 'op-1' } as const;

describe('the etcd steps before any disruption', () => {
  it('take the lease on the third try after two timed-out reads, saying so', async () => {
    const p = leasePorts([timedOut(), timedOut()]);
    const lines: string[] = [];
    const outcome = await execute(acquire, p.ports, ctx(lines));
    assert.equal(outcome.outcome, 'done');
    assert.equal(p.calls(), EtcdStepAttempts);
    assert.deepEqual(p.slept, [2_000, 4_000]);
    assert.match(lines[0] ?? '', /taking the upgrade lease: .*timed out; trying again \(2 of 3\)/);
  });

  it('fail after the last try', async () => {
    const p = leasePorts([timedOut(), timedOut(), timedOut()]);
    await assert.rejects(execute(acquire, p.ports, ctx([])), (e: unknown) =>
      e instanceof MoltError ? e.code === ErrorCode.TimedOut : false,
    );
    assert.equal(p.calls(), EtcdStepAttempts);
  });

  it('do not wait for a lease another machine holds, nor retry what is not retryable', async () => {
    for (const e of [
      new MoltError(ErrorCode.LeaseHeld, 'held by cp-2', { retryable: true }),
      new MoltError(ErrorCode.EtcdUnhealthy, 'etcd refused the request'),
    ]) {
      const p = leasePorts([e]);
      await assert.rejects(execute(acquire, p.ports, ctx([])), (x: unknown) => x === e);
      assert.equal(p.calls(), 1, e.code);
    }
  });
});
