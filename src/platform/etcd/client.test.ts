// SPDX-License-Identifier: Apache-2.0
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GRPCDeadlineExceededError, GRPCUnavailableError } from 'etcd3';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { etcdErrors, isTimeout } from './client.ts';

describe('etcdErrors', () => {
  it('makes a deadline MOLT_TIMED_OUT with the daemon’s hint, retryable', async () => {
    const { etcdCall } = etcdErrors('look at etcd');
    const e = await etcdCall('put k', Promise.reject(new GRPCDeadlineExceededError('late'))).then(
      () => assert.fail('resolved'),
      (x: unknown) => x as MoltError,
    );
    assert.equal(e.code, ErrorCode.TimedOut);
    assert.equal(e.message, 'etcd: put k timed out; its outcome is unknown');
    assert.equal(e.hint, 'look at etcd');
    assert.equal(e.retryable, true);
    assert.equal(isTimeout(e), true);
  });

  it('gives no hint when the daemon has none, and passes MoltErrors through', () => {
    const { toMoltError } = etcdErrors();
    assert.equal(toMoltError(new GRPCDeadlineExceededError('late'), 'get k').hint, undefined);
    const own = new MoltError(ErrorCode.LeaseHeld, 'held');
    assert.equal(toMoltError(own, 'get k'), own);
  });

  it('makes any other etcd failure MOLT_ETCD_UNHEALTHY, retryable only when etcd was unavailable', () => {
    const { toMoltError } = etcdErrors('unused');
    const down = toMoltError(new GRPCUnavailableError('down'), 'get k');
    assert.equal(down.code, ErrorCode.EtcdUnhealthy);
    assert.equal(down.message, 'etcd: get k failed: down');
    assert.equal(down.retryable, true);
    assert.equal(toMoltError(new Error('odd'), 'get k').retryable, false);
  });
});
