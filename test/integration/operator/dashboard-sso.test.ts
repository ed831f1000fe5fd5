// SPDX-License-Identifier: Apache-2.0
// Single sign-on on the dashboard, in real headless Chromium against a real OpenID Connect
// provider: `oidc-provider` (an OpenID Certified provider; Dex is not on the Go module proxy past
// 2018) with its own sign-in and consent pages on loopback. A person in a mapped group signs in
// through the provider and gets the role their group maps to; someone in no mapped group is told
// why and gets no session; a callback that no sign-in started is refused.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Provider from 'oidc-provider';
import type { Browser, Page } from 'playwright-core';
import { createDashboardServer } from '../../../src/operator/api/dashboard-server.ts';
import type { ListeningApi } from '../../../src/platform/https/server.ts';
import { DashboardOidc } from '../../../src/protocol/dashboard-config.ts';
import type { SessionView } from '../../../src/protocol/dashboard.ts';
import { apiFixture } from '../../../src/testkit/operator-api-fixture.ts';
import { launchChromium } from './browser.ts';

const artifacts = join(import.meta.dirname, '../../../test-artifacts');
/** Each person at the provider and their groups. */
const groups: Readonly<Record<string, readonly string[]>> = {
  alice: ['staff', 'sre'],
  mallory: ['contractors'],
};

let idp: ReturnType<typeof createServer>;
let dashboard: ListeningApi;
let browser: Browser;
let page: Page;

/** A free loopback port (the dashboard's URL must be known before it starts: it is the callback). */
async function freePort(): Promise<number> {
  const s = createNetServer();
  await new Promise<void>((done) => s.listen(0, '127.0.0.1', done));
  const { port } = s.address() as AddressInfo;
  await new Promise((done) => s.close(done));
  return port;
}

before(async () => {
  let handle: (req: IncomingMessage, res: ServerResponse) => void = (_q, res) => res.end();
  idp = createServer((req, res) => {
    handle(req, res);
  });
  await new Promise<void>((done) => idp.listen(0, '127.0.0.1', done));
  const issuer = `http://127.0.0.1:${String((idp.address() as AddressInfo).port)}`;
  const port = await freePort();
  const redirectUrl = `http://127.0.0.1:${String(port)}/v1/session/oidc/callback`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: 'molt-dashboard',
        client_secret: 'a-client-secret-of-some-length',
        redirect_uris: [redirectUrl],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    scopes: ['openid', 'email', 'profile', 'groups'],
    claims: { openid: ['sub'], email: ['email'], groups: ['groups'] },
    // The claims go in the ID token, which is what the dashboard reads.
    conformIdTokenClaims: false,
    findAccount: (_ctx, id) => ({
      accountId: id,
      claims: () => ({ sub: id, email: `${id}@example.com`, groups: [...(groups[id] ?? [])] }),
    }),
    cookies: { keys: ['a-cookie-key-for-this-test-only'] },
  });
  const serve = provider.callback();
  handle = (req, res) => {
    void serve(req, res);
  };
  const f = await apiFixture();
  dashboard = await createDashboardServer({
    deps: f.deps,
    access: {
      users: [],
      anonymousRead: false,
      sessionTtl: 3_600_000,
      sso: {
        ...DashboardOidc.parse({
          issuer,
          clientId: 'molt-dashboard',
          redirectUrl,
          name: 'Example SSO',
          roles: [
            { group: 'staff', role: 'viewer' },
            { group: 'sre', role: 'operator' },
          ],
        }),
        clientSecret: 'a-client-secret-of-some-length',
      },
    },
    tls: undefined,
    host: '127.0.0.1',
    port,
  });
  browser = await launchChromium();
  await mkdir(artifacts, { recursive: true });
});

after(async () => {
  await (browser as Browser | undefined)?.close();
  await (dashboard as ListeningApi | undefined)?.close();
  idp.closeAllConnections();
  await new Promise((done) => idp.close(done));
});

/** Through the provider's sign-in and consent pages as `login`, from the dashboard's button. */
async function signInAs(login: string): Promise<void> {
  page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
  await page.goto(`${dashboard.url}#/login`);
  const button = page.locator('#login-sso-link');
  await button.waitFor({ state: 'visible', timeout: 10_000 });
  assert.equal(await button.innerText(), 'Sign in with Example SSO');
  await button.click();
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('any password');
  await page.locator('button[type="submit"]').click();
  await page.locator('button', { hasText: 'Continue' }).click();
}

describe('single sign-on on the dashboard, through a real OpenID Connect provider', () => {
  it('signs a person in with the role their groups map to (the highest)', async () => {
    await signInAs('alice');
    const who = page.locator('#who');
    await who.waitFor({ timeout: 20_000 });
    assert.equal(await who.innerText(), 'alice@example.com (operator)');
    assert.equal(await who.getAttribute('data-role'), 'operator');
    await page.locator('#overview-page').waitFor({ state: 'visible' });
    await page.screenshot({ path: join(artifacts, 'dashboard-sso.png'), fullPage: true });
    const session = await page.evaluate<SessionView>("fetch('/v1/session').then((r) => r.json())");
    assert.deepEqual(session.user, { name: 'alice@example.com', role: 'operator' });
    await page.close();
  });

  it('tells someone in no mapped group why, and gives them no session', async () => {
    await signInAs('mallory');
    const text = await page.locator('body').innerText();
    assert.match(text, /mallory@example\.com is in no group this dashboard gives a role/);
    assert.match(text, /groups: contractors/);
    assert.match(text, /ask to be added to one of: staff, sre/);
    const cookies = await page.context().cookies(dashboard.url);
    assert.deepEqual(
      cookies.filter((c) => c.name === 'molt_session'),
      [],
    );
    await page.close();
  });

  it('refuses a callback that no sign-in here started', async () => {
    const res = await fetch(
      new URL('/v1/session/oidc/callback?code=x&state=forged', dashboard.url),
    );
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('set-cookie'), null);
    assert.match(await res.text(), /this sign-in was not started here, or took too long/);
  });
});
