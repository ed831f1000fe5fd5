// SPDX-License-Identifier: Apache-2.0
// The netns network itself is exercised as root by test/integration/lab/netns.test.ts.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { chooseNetworkMode, loopbackNetwork, removeNetwork } from './network.ts';

describe('lab network', () => {
  it('puts loopback machines on 127.0.0.1 at ports of their own, with nothing to remove', async () => {
    const n = loopbackNetwork();
    const a = await n.machine('cp-1');
    assert.deepEqual(a, { name: 'cp-1', address: '127.0.0.1', exec: [] });
    const ports = new Set([await n.port('api'), await n.port('api'), await n.port('etcd-client')]);
    assert.equal(ports.size, 3, 'each port asked for is another free one');
    assert.equal(n.record(), undefined);
  });

  it('never gives out a port twice, though the kernel may offer the same free port again', async () => {
    const offered = [5000, 5000, 5001, 5000, 5002];
    const n = loopbackNetwork({ freePort: () => Promise.resolve(offered.shift() ?? 0) });
    assert.deepEqual(
      [await n.port('api'), await n.port('etcd-client'), await n.port('etcd-peer')],
      [5000, 5001, 5002],
    );
  });

  it('keeps an asked-for loopback mode, and picks netns only as root', async () => {
    assert.equal(await chooseNetworkMode('loopback'), 'loopback');
    const auto = await chooseNetworkMode('auto');
    assert.equal(auto, process.getuid?.() === 0 ? 'netns' : 'loopback');
  });

  it('has nothing to remove without a record, and forgets a record whose links are gone', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'molt-net-'));
    try {
      assert.equal(await removeNetwork(dir), false);
      await writeFile(
        join(dir, 'network.json'),
        JSON.stringify({
          bridge: 'moltbr-none',
          subnet: '10.231.250.0/24',
          namespaces: ['x-none'],
        }),
      );
      assert.equal(await removeNetwork(dir), true);
      assert.equal(await removeNetwork(dir), false, 'the record went with it');
    } finally {
      await rm(dir, { recursive: true });
    }
  });
});
