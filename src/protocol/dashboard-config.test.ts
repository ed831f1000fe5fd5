// SPDX-License-Identifier: Apache-2.0
// The operator config's `dashboard`: users with roles and token hashes; a dashboard nobody could
// read is refused with a message naming the fix.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DashboardConfig } from './dashboard-config.ts';

const listen = { host: '127.0.0.1', port: 8080 };
const hash = (c: string) => c.repeat(64);

describe('the dashboard config', () => {
  it('defaults to no anonymous reads and 8 h sign-ins', () => {
    const d = DashboardConfig.parse({
      listen,
      users: [{ name: 'alice', role: 'operator', tokenSha256: hash('a') }],
    });
    assert.deepEqual(
      [d.anonymousRead, d.sessionTtl, d.tls, d.users[0]?.role],
      [false, 8 * 3_600_000, false, 'operator'],
    );
  });

  it('refuses a dashboard nobody could read, naming both ways out', () => {
    const r = DashboardConfig.safeParse({ listen });
    assert.equal(r.success, false);
    assert.match(r.error.issues[0]?.message ?? '', /add a user .*or set anonymousRead: true/);
    assert.equal(DashboardConfig.safeParse({ listen, anonymousRead: true }).success, true);
  });

  it('refuses an unknown role, a token that is not a hash, and a name or token listed twice', () => {
    const bad = [
      [{ name: 'a', role: 'root', tokenSha256: hash('a') }],
      [{ name: 'a', role: 'viewer', tokenSha256: 'secret' }],
      [
        { name: 'a', role: 'viewer', tokenSha256: hash('a') },
        { name: 'a', role: 'admin', tokenSha256: hash('b') },
      ],
      [
        { name: 'a', role: 'viewer', tokenSha256: hash('a') },
        { name: 'b', role: 'admin', tokenSha256: hash('a') },
      ],
    ];
    for (const users of bad)
      assert.equal(
        DashboardConfig.safeParse({ listen, users }).success,
        false,
        JSON.stringify(users),
      );
  });
});
