// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { looksLikeEtcdSnapshot } from './etcd-snapshot.ts';

/** The first 32 bytes of a snapshot `etcdctl snapshot save` wrote (etcd 3.4.23). */
const real = Uint8Array.from(
  ('0000000000000000' + '0400000000000000' + 'edda0ced02000000' + '0010000000000000')
    .match(/../g)
    ?.map((h) => parseInt(h, 16)) ?? [],
);

describe('etcd snapshot header', () => {
  it('knows a bbolt meta page', () => {
    assert.equal(real.length, 32);
    assert.equal(looksLikeEtcdSnapshot(real), true);
  });

  it('refuses other files, short files and a damaged magic', () => {
    assert.equal(
      looksLikeEtcdSnapshot(new TextEncoder().encode('apiVersion: v1\nkind: Config\n')),
      false,
    );
    assert.equal(looksLikeEtcdSnapshot(real.slice(0, 19)), false);
    const flags = real.slice();
    flags[8] = 0x10;
    assert.equal(looksLikeEtcdSnapshot(flags), false);
    const magic = real.slice();
    magic[17] = 0;
    assert.equal(looksLikeEtcdSnapshot(magic), false);
  });
});
