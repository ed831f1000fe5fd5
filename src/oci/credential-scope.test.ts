// SPDX-License-Identifier: Apache-2.0
// Where the registry password goes, through the whole client against fake registries on loopback.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../protocol/index.ts';
import { startFakeRegistry, type FakeRegistry } from '../testkit/fake-registry.ts';
import { credentialsFor, isLoopbackHost } from './credential-scope.ts';
import { createRegistryClient } from './index.ts';

const alice = { username: 'alice', password: 's3cret' };
const withheld = (e: unknown): boolean => isMoltError(e, ErrorCode.RegistryCredentialsWithheld);

describe('registry credentials', () => {
  it('belong to the one registry host they name', () => {
    const scoped = { registry: 'Reg.Example:5000', ...alice };
    assert.deepEqual(credentialsFor(scoped, 'reg.example:5000'), alice);
    assert.equal(credentialsFor(scoped, 'reg.example'), undefined, 'another port is another host');
    assert.equal(credentialsFor(scoped, 'collector.example:5000'), undefined);
    assert.equal(credentialsFor(undefined, 'reg.example:5000'), undefined);
  });

  it('knows loopback hosts, as a hostname or as host[:port]', () => {
    for (const h of ['127.0.0.1', '127.8.9.1', 'localhost', '[::1]', '::1', 'LocalHost'])
      assert.ok(isLoopbackHost(h), h);
    for (const h of ['localhost:5000', '127.0.0.1:5000', '127.1.2.3', '[::1]:5000'])
      assert.ok(isLoopbackHost(h), h);
    for (const h of ['10.0.2.2', '128.0.0.1', 'localhost.evil', '[::2]', '127.example', '::2'])
      assert.ok(!isLoopbackHost(h), h);
    for (const h of ['10.0.0.1:5000', '127.example.com:5000', '[::2]:5000', 'reg.example:127'])
      assert.ok(!isLoopbackHost(h), h);
  });

  it('are refused over plain HTTP or an unverified certificate to a host that is not loopback', () => {
    for (const registry of ['10.0.2.2:5000', 'http://reg.example', 'https://reg.example']) {
      assert.throws(
        () => createRegistryClient({ registry, insecure: true, credentials: alice }),
        withheld,
        registry,
      );
    }
  });

  it('go over plain HTTP to loopback, and over verified https anywhere', async () => {
    for (const o of [
      { registry: '127.0.0.1:5000', insecure: true, credentials: alice },
      { registry: 'localhost:5000', insecure: true, credentials: alice },
      { registry: 'reg.example', insecure: false, credentials: alice },
      { registry: '10.0.2.2:5000', insecure: true },
    ]) {
      const client = createRegistryClient(o);
      await client.close();
    }
  });

  describe('and a token service the registry names', () => {
    let registry: FakeRegistry;
    let elsewhere: FakeRegistry;
    before(async () => {
      [registry, elsewhere] = await Promise.all([startFakeRegistry(), startFakeRegistry()]);
    });
    after(async () => {
      await Promise.all([registry.close(), elsewhere.close()]);
    });

    it('never reaches a token service on another host: no request is made', async () => {
      // `localhost:<port>` is the other fake under another host name than the registry's 127.0.0.1.
      registry.inject({
        fault: {
          kind: 'status',
          status: 401,
          headers: { 'www-authenticate': `Bearer realm="${elsewhere.altOrigin}/token"` },
        },
      });
      const client = createRegistryClient({
        registry: registry.host,
        insecure: true,
        credentials: alice,
        retries: 0,
      });
      try {
        await assert.rejects(client.listTags('acme/installer'), withheld);
        assert.deepEqual(elsewhere.requests, [], 'the other host heard nothing');
      } finally {
        registry.clearFaults();
        await client.close();
      }
    });
  });
});
