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
  it('allows a burst per address, then one attempt per refill period', () => {
    let now = 0;
    const l = new LoginLimiter({ now: () => now, perClient: { burst: 2, refillMs: 10_000 } });
    assert.deepEqual([l.attempt('a').ok, l.attempt('a').ok], [true, true]);
    assert.deepEqual(l.attempt('a'), { ok: false, retryAfterMs: 10_000 });
    assert.equal(l.attempt('b').ok, true, 'another address has its own bucket');
    now = 9_999;
    assert.equal(l.attempt('a').ok, false);
    now = 10_000;
    assert.equal(l.attempt('a').ok, true);
    assert.equal(l.attempt('a').ok, false);
  });

  it('limits all addresses together', () => {
    const l = new LoginLimiter({ now: () => 0, overall: { burst: 3, refillMs: 1000 } });
    assert.deepEqual(
      ['a', 'b', 'c', 'd'].map((c) => l.attempt(c).ok),
      [true, true, true, false],
    );
  });

  it('gives back the attempt of a sign-in that succeeded', () => {
    const l = new LoginLimiter({ now: () => 0, perClient: { burst: 1, refillMs: 60_000 } });
    assert.equal(l.attempt('a').ok, true);
    l.refund('a');
    assert.equal(l.attempt('a').ok, true);
    assert.equal(l.attempt('a').ok, false);
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
