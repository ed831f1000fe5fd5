// SPDX-License-Identifier: Apache-2.0
// The dashboard's sessions and sign-in limits on a fake clock: sessions end on time and are
// bounded; the limiter slows one address and everyone, and forgives sign-ins that succeed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SessionBook } from './dashboard-sessions.ts';
import { LoginLimiter } from './login-limiter.ts';
import { pageTemplate, scriptSafeJson } from './dashboard-page.ts';

const alice = { name: 'alice', role: 'operator' as const };

function book(o: { max?: number } = {}) {
  let now = 0;
  let n = 0;
  const sessions = new SessionBook({ ttlMs: 1000, now: () => now, secret: () => `s${++n}`, ...o });
  return { sessions, advance: (ms: number) => (now += ms) };
}

describe('the dashboard’s sessions', () => {
  it('gives each session its own id and CSRF token, until it expires', () => {
    const { sessions, advance } = book();
    const s = sessions.create(alice);
    assert.notEqual(s.id, s.csrf);
    assert.deepEqual(sessions.get(s.id)?.user, alice);
    advance(999);
    assert.ok(sessions.get(s.id));
    advance(1);
    assert.equal(sessions.get(s.id), undefined);
    assert.equal(sessions.size, 0);
  });

  it('keeps at most max sessions, ending the oldest first', () => {
    const { sessions } = book({ max: 2 });
    const [a, b, c] = [sessions.create(alice), sessions.create(alice), sessions.create(alice)];
    assert.equal(sessions.get(a.id), undefined);
    assert.ok(sessions.get(b.id) && sessions.get(c.id));
    assert.equal(sessions.size, 2);
  });

  it('ends a session on sign-out and knows no made-up id', () => {
    const { sessions } = book();
    const s = sessions.create(alice);
    sessions.end(s.id);
    assert.equal(sessions.get(s.id), undefined);
    assert.equal(sessions.get('s99'), undefined);
    assert.equal(sessions.get(undefined), undefined);
  });
});

describe('the sign-in limiter', () => {
  it('allows a burst of failures per address, then one per refill period', () => {
    let now = 0;
    const l = new LoginLimiter({ now: () => now, perClient: { burst: 2, refillMs: 10_000 } });
    l.fail('a');
    assert.equal(l.check('a').ok, true);
    l.fail('a');
    assert.deepEqual(l.check('a'), { ok: false, retryAfterMs: 10_000 });
    assert.equal(l.check('b').ok, true, 'another address has its own bucket');
    now = 9_999;
    assert.equal(l.check('a').ok, false);
    now = 10_000;
    assert.equal(l.check('a').ok, true);
    l.fail('a');
    assert.equal(l.check('a').ok, false);
  });

  it('counts only failures: checks alone never refuse', () => {
    const l = new LoginLimiter({ now: () => 0, perClient: { burst: 1, refillMs: 60_000 } });
    for (let i = 0; i < 100; i++) assert.equal(l.check('a').ok, true);
  });

  it('never refuses an address that has not failed, however many others failed', () => {
    let now = 0;
    const l = new LoginLimiter({ now: () => now, overall: { burst: 3, refillMs: 1000 } });
    // One guess a second from a new address each time, for ten minutes.
    for (let i = 0; i < 600; i++, now += 1000) {
      l.fail(`10.0.${String(i >> 8)}.${String(i & 255)}`);
      assert.equal(l.check('192.0.2.1').ok, true, `second ${String(i)}`);
    }
  });

  it('while failures from everywhere keep the listener’s bucket empty, one failure empties an address', () => {
    let now = 0;
    const l = new LoginLimiter({
      now: () => now,
      perClient: { burst: 5, refillMs: 12_000 },
      overall: { burst: 3, refillMs: 1000 },
    });
    for (const c of ['a', 'b', 'c']) l.fail(c);
    assert.equal(l.check('a').ok, true, 'before the flood, a failure takes one of five');
    l.fail('d');
    assert.deepEqual(l.check('d'), { ok: false, retryAfterMs: 12_000 });
    now = 12_000;
    assert.equal(l.check('d').ok, true, 'its refill period ends its wait');
  });

  it('counts IPv6 addresses by their /64: many in one network are one address', () => {
    let now = 0;
    const l = new LoginLimiter({
      now: () => now,
      perClient: { burst: 5, refillMs: 12_000 },
      overall: { burst: 3, refillMs: 1000 },
    });
    // A new address of one /64 for every guess, one a second for a minute: the network gets the
    // five of one address, then one per refill period.
    let allowed = 0;
    for (let i = 1; i < 60; i++, now += 1000) {
      const from = `2001:db8:7:9:${i.toString(16)}::1`;
      if (!l.check(from).ok) continue;
      allowed++;
      l.fail(from);
    }
    assert.equal(allowed, 5 + 4, 'five at once, then one each 12 s');
    assert.equal(l.check('2001:db8:7:9:ffff:ffff:ffff:ffff').ok, false, 'the whole /64 waits');
    assert.equal(l.check('2001:DB8:7:9:0:0:0:1').ok, false, 'written another way, the same /64');
    assert.equal(l.check('2001:db8:7:a::1').ok, true, 'a right token from the next /64 is tried');
    assert.equal(l.check('192.0.2.1').ok, true, 'and from an IPv4 address');
  });
});

describe('the page’s embedded state', () => {
  it('cannot end its script element, whatever the data says', () => {
    const json = scriptSafeJson({ reason: '</script><script>alert(1)</script>', sep: '\u2028' });
    assert.doesNotMatch(json, /<|\u2028/);
    assert.deepEqual(JSON.parse(json), {
      reason: '</script><script>alert(1)</script>',
      sep: '\u2028',
    });
  });

  it('goes in just before the entry module, and a page without exactly one is refused', () => {
    const page = pageTemplate('<body><script type="module" src="m.js"></script></body>');
    assert.equal(
      page({ a: 1 }),
      '<body><script id="molt-state" type="application/json">{"a":1}</script>\n    <script type="module" src="m.js"></script></body>',
    );
    assert.throws(() => pageTemplate('<body></body>'), /exactly one module/);
  });
});
