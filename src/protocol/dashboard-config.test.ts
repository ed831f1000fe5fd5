// SPDX-License-Identifier: Apache-2.0
// The operator config's `dashboard`: users with roles and token hashes; a dashboard nobody could
// read is refused with a message naming the fix.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DashboardConfig, DashboardOidc, roleOfGroups } from './dashboard-config.ts';

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
    assert.match(r.error.issues[0]?.message ?? '', /add a user .*, oidc, or anonymousRead: true/);
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

describe('the dashboard’s single sign-on config', () => {
  const oidc = {
    issuer: 'https://login.example.com/dex',
    clientId: 'molt',
    redirectUrl: 'https://molt.example.com/v1/session/oidc/callback',
    roles: [{ group: 'sre', role: 'operator' }],
  };

  it('lets a dashboard with only single sign-on be read, with the usual claims and scopes', () => {
    const d = DashboardConfig.parse({ listen, oidc });
    assert.deepEqual(
      [d.oidc?.groupsClaim, d.oidc?.nameClaim, d.oidc?.scopes, d.oidc?.name],
      ['groups', 'email', ['openid', 'email', 'profile', 'groups'], 'single sign-on'],
    );
  });

  it('refuses a plain-HTTP provider elsewhere, a callback at another path, no openid scope, no role', () => {
    const refused = (over: object, message: RegExp): void => {
      const r = DashboardOidc.safeParse({ ...oidc, ...over });
      assert.equal(r.success, false, JSON.stringify(over));
      assert.match(r.error.issues.map((i) => i.message).join('\n'), message);
    };
    refused({ issuer: 'http://login.example.com' }, /must be https:\/\//);
    refused(
      { redirectUrl: 'https://molt.example.com/callback' },
      /must end in \/v1\/session\/oidc\/callback/,
    );
    refused({ scopes: ['email', 'groups'] }, /must include openid/);
    refused({ roles: [] }, /map at least one group to a role/);
    refused(
      { redirectUrl: `${oidc.redirectUrl}?next=/` },
      /must end in \/v1\/session\/oidc\/callback/,
    );
    assert.equal(
      DashboardOidc.safeParse({ ...oidc, issuer: 'http://127.0.0.1:5556' }).success,
      true,
    );
    const behindProxy = 'https://tools.example.com/molt/v1/session/oidc/callback';
    assert.equal(DashboardOidc.safeParse({ ...oidc, redirectUrl: behindProxy }).success, true);
  });

  it('gives the highest role any of a person’s groups maps to, and none for no mapped group', () => {
    const roles = [
      { group: 'staff', role: 'viewer' as const },
      { group: 'platform', role: 'admin' as const },
      { group: 'sre', role: 'operator' as const },
    ];
    assert.equal(roleOfGroups(roles, ['staff', 'sre']), 'operator');
    assert.equal(roleOfGroups(roles, ['platform', 'staff']), 'admin');
    assert.equal(roleOfGroups(roles, ['contractors']), undefined);
    assert.equal(roleOfGroups(roles, []), undefined);
  });
});
