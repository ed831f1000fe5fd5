// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/index.ts';
import { buildImage, pushImage, type Credentials } from '../../src/oci/index.ts';
import { clientFactory } from '../../src/testkit/clients.ts';
import { rejectsWithCode } from '../../src/testkit/registry-conformance.ts';
import { startRegistry, type TestRegistry } from '../../src/testkit/registry-process.ts';

const alice: Credentials = { username: 'alice', password: 's3cret' };
const image = buildImage({
  labels: { a: 'b' },
  layers: [
    { mediaType: 'application/vnd.oci.image.layer.v1.tar', bytes: new TextEncoder().encode('x') },
  ],
});

describe('bearer-token auth against docker-registry 2.8 (auth.token with signed JWTs)', () => {
  let registry: TestRegistry;
  const { client, closeAll } = clientFactory(() => registry.host);
  const tokenRequests = (): NonNullable<TestRegistry['tokenServer']>['requests'] =>
    registry.tokenServer?.requests ?? [];

  before(async () => {
    registry = await startRegistry({
      auth: { kind: 'token', users: [alice], field: 'access_token' },
    });
    const seeder = client(alice);
    await pushImage(seeder, 'acme/installer', ['1.0.0'], image);
    await pushImage(seeder, 'acme/other', ['2.0.0'], image);
  });
  after(async () => {
    await closeAll();
    await registry.stop();
  });

  it('fetches one token per scope, with Basic credentials, and reuses it', async () => {
    const c = client(alice);
    const seen = tokenRequests().length;
    assert.deepEqual(await c.listTags('acme/installer'), ['1.0.0']);
    const resolved = await c.resolveImage('acme/installer', '1.0.0');
    await c.getBlob('acme/installer', resolved.config.digest);
    await c.headManifest('acme/installer', '1.0.0');
    assert.equal(c.stats.token, 1);
    await c.listTags('acme/other');
    await c.getManifest('acme/other', '2.0.0');
    assert.equal(c.stats.token, 2);
    const mine = tokenRequests().slice(seen);
    assert.deepEqual(
      mine.map((r) => r.scopes),
      [['repository:acme/installer:pull'], ['repository:acme/other:pull']],
    );
    assert.ok(mine.every((r) => r.user === 'alice' && r.service === 'molt-test-registry'));
    // One 401 round trip to learn the challenge, then tokens up front.
    assert.equal(c.stats.tagList, 3);
  });

  it('pushes with a pull,push token', async () => {
    const c = client(alice);
    await pushImage(c, 'acme/pushed', ['1.0.0'], image);
    assert.ok(tokenRequests().some((r) => r.scopes.includes('repository:acme/pushed:pull,push')));
    assert.equal(
      (await c.headManifest('acme/pushed', '1.0.0'))?.digest,
      image.manifest.descriptor.digest,
    );
  });

  it('refuses wrong credentials at the token service', async () => {
    await rejectsWithCode(
      client({ username: 'alice', password: 'nope' }).listTags('acme/installer'),
      ErrorCode.RegistryUnauthorized,
      'token service',
      'repository:acme/installer:pull',
    );
  });

  it('refuses an anonymous client the token service grants nothing', async () => {
    await rejectsWithCode(
      client().getManifest('acme/installer', '1.0.0'),
      ErrorCode.RegistryUnauthorized,
      registry.host,
      'acme/installer:1.0.0',
    );
  });

  it('pings through a scope-less token', async () => {
    const c = client(alice);
    await c.ping();
    assert.equal(c.stats.token, 1);
    assert.deepEqual(tokenRequests().at(-1)?.scopes, []);
  });
});
