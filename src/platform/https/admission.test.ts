// SPDX-License-Identifier: Apache-2.0
// The per-peer book of a listener without sockets: who gives way at a pending cap, which cap a
// connection or a stream meets, that the operator role is outside the connection caps, and that a
// place is freed once.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addressKey, addressPeer, PeerBook, type AdmissionLimits, type Peer } from './admission.ts';

const limits: AdmissionLimits = {
  maxPending: 4,
  maxPendingPerAddress: 2,
  maxConnections: 2,
  maxConnectionsPerPeer: 2,
  maxStreamsPerPeer: 1,
};

/** A pending socket that records whether the book cut it. */
function socket(name: string): { name: string; cut: boolean; destroy(): void } {
  const s = {
    name,
    cut: false,
    destroy() {
      s.cut = true;
    },
  };
  return s;
}

const cert = (name: string, role: 'node' | 'operator' | 'admin'): Peer => ({
  key: `cert:${role}:${name}`,
  label: `${name} (role ${role})`,
  certified: true,
  reserved: role === 'operator',
});

describe('the pending budget', () => {
  it('makes the oldest socket of an address give way to its new one, never another address’s', () => {
    const book = new PeerBook(limits);
    const [a1, a2, a3, b1] = ['a1', 'a2', 'a3', 'b1'].map(socket) as [
      ReturnType<typeof socket>,
      ReturnType<typeof socket>,
      ReturnType<typeof socket>,
      ReturnType<typeof socket>,
    ];
    book.arrive(b1, '192.0.2.9');
    book.arrive(a1, '192.0.2.1');
    book.arrive(a2, '192.0.2.1');
    book.arrive(a3, '192.0.2.1');
    assert.deepEqual(
      [a1, a2, a3, b1].map((s) => s.cut),
      [true, false, false, false],
    );
    assert.equal(book.pending, 3);
  });

  it('makes the address holding the most give way when the listener’s pending cap is reached', () => {
    const book = new PeerBook(limits);
    const all = ['b1', 'a1', 'a2', 'c1', 'd1'].map(socket);
    const [b1, a1, a2, c1, d1] = all as [
      ReturnType<typeof socket>,
      ReturnType<typeof socket>,
      ReturnType<typeof socket>,
      ReturnType<typeof socket>,
      ReturnType<typeof socket>,
    ];
    book.arrive(b1, '192.0.2.2');
    book.arrive(a1, '192.0.2.1');
    book.arrive(a2, '192.0.2.1');
    book.arrive(c1, '192.0.2.3');
    book.arrive(d1, '192.0.2.4');
    assert.deepEqual(
      all.filter((s) => s.cut).map((s) => s.name),
      ['a1'],
    );
    assert.equal(book.pending, 4);
  });

  it('forgets a settled socket, once', () => {
    const book = new PeerBook(limits);
    const s = socket('s');
    book.arrive(s, '192.0.2.1');
    book.settle(s);
    book.settle(s);
    assert.equal(book.pending, 0);
    for (const n of ['x', 'y']) book.arrive(socket(n), '192.0.2.1');
    assert.equal(s.cut, false);
  });
});

describe('established connections', () => {
  it('meet the peer’s cap (429) before the listener’s (503)', () => {
    const book = new PeerBook(limits);
    const a = cert('node-a', 'node');
    assert.equal(book.admit(a).granted, true);
    assert.equal(book.admit(a).granted, true);
    const own = book.admit(a);
    assert.equal(own.granted ? 0 : own.refusal.status, 429);
    const full = book.admit(cert('node-b', 'node'));
    assert.equal(full.granted ? 0 : full.refusal.status, 503);
    assert.equal(full.granted ? '' : full.refusal.body.code, 'MOLT_CONNECTION_LIMIT');
  });

  it('keep the operator role outside the listener’s cap and the per-peer cap', () => {
    const book = new PeerBook(limits);
    book.admit(cert('node-a', 'node'));
    book.admit(cert('node-b', 'node'));
    const op = cert('operator-1', 'operator');
    const ops = Array.from({ length: 4 * limits.maxConnectionsPerPeer }, () => book.admit(op));
    assert.ok(
      ops.every((v) => v.granted),
      'a burst of calls to one agent is served',
    );
    // …and its connections never take the others' places.
    const admin = cert('carol', 'admin');
    assert.equal(book.admit(admin).granted, false);
  });

  it('free a place once, however often released', () => {
    const book = new PeerBook(limits);
    const a = book.admit(cert('node-a', 'node'));
    book.admit(cert('node-b', 'node'));
    if (!a.granted) assert.fail('refused');
    a.release();
    a.release();
    assert.equal(book.admit(cert('node-c', 'node')).granted, true);
    assert.equal(book.admit(cert('node-d', 'node')).granted, false);
  });

  it('count a peer without a certificate by its address', () => {
    const book = new PeerBook({ ...limits, maxConnections: 10 });
    for (const a of ['192.0.2.1', '::ffff:192.0.2.1']) book.admit(addressPeer(a));
    const third = book.admit(addressPeer('192.0.2.1'));
    assert.match(third.granted ? '' : third.refusal.body.message, /^192\.0\.2\.1 .*one address/);
  });
});

describe('event streams', () => {
  it('are held per peer and freed when one ends', () => {
    const book = new PeerBook(limits);
    const a = cert('node-a', 'node');
    const first = book.openStream(a);
    const second = book.openStream(a);
    assert.equal(second.granted ? 0 : second.refusal.status, 429);
    assert.equal(book.openStream(cert('node-b', 'node')).granted, true);
    if (first.granted) first.release();
    assert.equal(book.openStream(a).granted, true);
  });
});

describe('addressKey', () => {
  it('counts IPv4 as is, IPv4-mapped as IPv4 and IPv6 by its /64', () => {
    assert.equal(addressKey('192.0.2.1'), '192.0.2.1');
    assert.equal(addressKey('::ffff:192.0.2.1'), '192.0.2.1');
    assert.equal(addressKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
    assert.equal(addressKey('2001:db8:1:2::ffff'), '2001:db8:1:2::/64');
    assert.equal(addressKey('2001:0db8::1'), '2001:db8:0:0::/64');
    assert.equal(addressKey('::1'), '0:0:0:0::/64');
    assert.equal(addressKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
    assert.equal(addressKey(undefined), 'unknown');
  });
});
