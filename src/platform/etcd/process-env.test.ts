// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { etcdEnv } from './process-env.ts';

describe("etcd's environment", () => {
  it('drops every ETCD_* variable (etcd 3.4 refuses one that shadows a flag) and keeps the rest', () => {
    const env = etcdEnv({ PATH: '/bin', ETCD_NAME: 'x', ETCDCTL_API: '3', HOME: '/root' }, 'x64');
    assert.deepEqual(env, { PATH: '/bin', ETCDCTL_API: '3', HOME: '/root' });
  });

  it('names the architecture etcd 3.4 would refuse to start on', () => {
    assert.equal(etcdEnv({}, 'arm')['ETCD_UNSUPPORTED_ARCH'], 'arm');
    assert.equal(etcdEnv({}, 'x64')['ETCD_UNSUPPORTED_ARCH'], undefined);
  });
});
