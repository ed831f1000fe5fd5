// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../protocol/index.ts';
import { Authenticator, type AuthenticatorOptions, type TokenResponse } from './auth.ts';

const challenge = 'Bearer realm="https://auth.example/token",service="reg"';
const scope = ['repository:acme/installer:pull'];

function setup(
  answer: (n: number) => TokenResponse,
  more: Partial<AuthenticatorOptions> = {},
): {
  auth: Authenticator;
  urls: string[];
  headers: Record<string, string>[];
  clock: { now: number };
} {
  const urls: string[] = [];
  const headers: Record<string, string>[] = [];
  const clock = { now: 1_000_000 };
  const auth = new Authenticator({
    registry: 'reg.example',
    credentials: { username: 'u', password: 'p' },
    // Docker Hub's shape: the token service on a host of its own, listed by the owner.
    realms: { tokenRealms: ['auth.example'] },
    ...more,
    requestToken: (url, h) => {
      urls.push(url);
      headers.push(h);
      return Promise.resolve(answer(urls.length));
    },
    now: () => clock.now,
  });
  return { auth, urls, headers, clock };
}

describe('Authenticator', () => {
  it('sends nothing before the first challenge, then fetches a token with Basic credentials', async () => {
    const { auth, urls, headers } = setup(() => ({ status: 200, body: '{"token":"t1"}' }));
    assert.equal(await auth.authorization(scope), undefined);
    assert.deepEqual(auth.challenged(challenge, scope, undefined), scope);
    assert.equal(await auth.authorization(scope), 'Bearer t1');
    assert.equal(
      urls[0],
      'https://auth.example/token?service=reg&scope=repository%3Aacme%2Finstaller%3Apull',
    );
    assert.equal(headers[0]?.['authorization'], `Basic ${Buffer.from('u:p').toString('base64')}`);
  });

  it('caches per scope until expires_in (default 60 s) runs out', async () => {
    const { auth, urls, clock } = setup((n) => ({
      status: 200,
      body: JSON.stringify({ access_token: `t${n}` }),
    }));
    auth.challenged(challenge, scope, undefined);
    assert.equal(await auth.authorization(scope), 'Bearer t1');
    assert.equal(await auth.authorization(scope), 'Bearer t1');
    assert.equal(await auth.authorization(['repository:other:pull']), 'Bearer t2');
    clock.now += 50_000;
    assert.equal(await auth.authorization(scope), 'Bearer t1');
    clock.now += 6_000;
    assert.equal(await auth.authorization(scope), 'Bearer t3');
    assert.equal(urls.length, 3);
  });

  it('shares one in-flight token request between concurrent callers', async () => {
    const { auth, urls } = setup(() => ({ status: 200, body: '{"token":"t","expires_in":300}' }));
    auth.challenged(challenge, scope, undefined);
    const all = await Promise.all([
      auth.authorization(scope),
      auth.authorization(scope),
      auth.authorization(scope),
    ]);
    assert.deepEqual(all, ['Bearer t', 'Bearer t', 'Bearer t']);
    assert.equal(urls.length, 1);
  });

  it('uses the scope the challenge names, and drops a refused token', async () => {
    const { auth, urls } = setup((n) => ({ status: 200, body: `{"token":"t${n}"}` }));
    auth.challenged(challenge, scope, undefined);
    await auth.authorization(scope);
    const retry = auth.challenged(
      `${challenge},scope="repository:acme/installer:pull,push"`,
      scope,
      'Bearer t1',
    );
    assert.deepEqual(retry, ['repository:acme/installer:pull,push']);
    assert.equal(await auth.authorization(scope), 'Bearer t2');
    assert.equal(urls.length, 2);
  });

  it('maps a 401 from the token service to MOLT_REGISTRY_UNAUTHORIZED and does not cache it', async () => {
    const { auth, urls } = setup((n) =>
      n === 1 ? { status: 401, body: 'nope' } : { status: 200, body: '{"token":"ok"}' },
    );
    auth.challenged(challenge, scope, undefined);
    await assert.rejects(auth.authorization(scope), (e: unknown) =>
      isMoltError(e, ErrorCode.RegistryUnauthorized),
    );
    assert.equal(await auth.authorization(scope), 'Bearer ok');
    assert.equal(urls.length, 2);
  });

  it('maps a refused anonymous token to MOLT_REGISTRY_CREDENTIALS_WITHHELD when the owner’s credentials were withheld, with their hint', async () => {
    for (const status of [401, 403]) {
      const urls: string[] = [];
      const heads: Record<string, string>[] = [];
      const auth = new Authenticator({
        registry: 'reg.example',
        withheldCredentials: 'set registry.host',
        requestToken: (url, h) => {
          urls.push(url);
          heads.push(h);
          return Promise.resolve({ status, body: 'nope' });
        },
        now: () => 0,
      });
      auth.challenged(challenge, scope, undefined);
      await assert.rejects(
        auth.authorization(scope),
        (e: unknown) =>
          isMoltError(e, ErrorCode.RegistryCredentialsWithheld) && e.hint === 'set registry.host',
        String(status),
      );
      assert.equal(heads[0]?.['authorization'], undefined, 'asked anonymously');
    }
  });

  it('refuses a token answer that is JSON but not an object (null, a list) as MOLT_REGISTRY_PROTOCOL', async () => {
    // Found by oci.fuzz.test.ts: `null` made the token parser throw a TypeError.
    for (const body of ['null', '[]', '"t"', '7']) {
      const { auth } = setup(() => ({ status: 200, body }));
      auth.challenged(challenge, scope, undefined);
      await assert.rejects(auth.authorization(scope), (e) =>
        isMoltError(e, ErrorCode.RegistryProtocol),
      );
    }
  });

  it('answers a Basic challenge with the credentials, once', async () => {
    const { auth } = setup(() => ({ status: 500, body: '' }));
    assert.deepEqual(auth.challenged('Basic realm="r"', scope, undefined), scope);
    const basic = await auth.authorization(scope);
    assert.match(basic ?? '', /^Basic /);
    assert.equal(auth.challenged('Basic realm="r"', scope, basic), undefined);
  });

  describe('where the password goes', () => {
    const basicUp = `Basic ${Buffer.from('u:p').toString('base64')}`;
    const ok = (): TokenResponse => ({ status: 200, body: '{"token":"t"}' });
    const withheld = (e: unknown): boolean => isMoltError(e, ErrorCode.RegistryCredentialsWithheld);

    it('to a token service over https on the registry’s own host, whatever its port', async () => {
      const { auth, headers } = setup(ok, { realms: {} });
      auth.challenged('Bearer realm="https://reg.example:5001/token"', scope, undefined);
      assert.equal(await auth.authorization(scope), 'Bearer t');
      assert.equal(headers[0]?.['authorization'], basicUp);
    });

    it('never to a token service on another host the challenge names', async () => {
      const { auth, urls } = setup(ok, { realms: {} });
      auth.challenged('Bearer realm="https://collector.example/token"', scope, undefined);
      await assert.rejects(auth.authorization(scope), withheld);
      assert.deepEqual(urls, [], 'no request at all went to the other host');
    });

    it('never to a plain-HTTP token service, even on the registry’s host or a listed one', async () => {
      for (const realm of ['http://reg.example/token', 'http://auth.example/token']) {
        const { auth, urls } = setup(ok, {
          realms: { tokenRealms: ['auth.example'], insecure: true },
        });
        auth.challenged(`Bearer realm="${realm}"`, scope, undefined);
        await assert.rejects(auth.authorization(scope), withheld, realm);
        assert.deepEqual(urls, [], realm);
      }
    });

    it('over plain HTTP only to a loopback token service of an insecure loopback registry (the tests’ own)', async () => {
      const origin = new URL('http://127.0.0.1:5000');
      const { auth, headers } = setup(ok, {
        registry: '127.0.0.1:5000',
        realms: { origin, insecure: true },
      });
      auth.challenged('Bearer realm="http://127.0.0.1:5097/token"', scope, undefined);
      assert.equal(await auth.authorization(scope), 'Bearer t');
      assert.equal(headers[0]?.['authorization'], basicUp);
      const strict = setup(ok, { registry: '127.0.0.1:5000', realms: { origin } });
      strict.auth.challenged('Bearer realm="http://127.0.0.1:5097/token"', scope, undefined);
      await assert.rejects(strict.auth.authorization(scope), withheld, 'not without insecure');
    });

    it('without credentials, asks any https token service anonymously', async () => {
      const urls: string[] = [];
      const heads: Record<string, string>[] = [];
      const auth = new Authenticator({
        registry: 'reg.example',
        requestToken: (url, h) => {
          urls.push(url);
          heads.push(h);
          return Promise.resolve(ok());
        },
        now: () => 0,
      });
      auth.challenged('Bearer realm="https://auth.other/token"', scope, undefined);
      assert.equal(await auth.authorization(scope), 'Bearer t');
      assert.equal(urls.length, 1);
      assert.equal(heads[0]?.['authorization'], undefined);
    });
  });
});
