// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/index.ts';
import { buildImage, pushImage, type Credentials } from '../../src/oci/index.ts';
import { clientFactory } from '../../src/testkit/clients.ts';
import { rejectsWithCode } from '../../src/testkit/registry-conformance.ts';
import { startRegistry, type RunningRegistry } from '../../src/testkit/registry-process.ts';

const alice: Credentials = { username: 'alice', password: 'correct horse' };

describe('basic auth against docker-registry 2.8 (htpasswd)', () => {
  let registry: RunningRegistry;
  const { client, closeAll } = clientFactory(() => registry.host);

  before(async () => {
    registry = await startRegistry({ auth: { kind: 'htpasswd', users: [alice] } });
  });
  after(async () => {
    await closeAll();
    await registry.stop();
  });

  it('pushes and reads with the right credentials, learning Basic from the first challenge', async () => {
    const c = client(alice);
    const digest = await pushImage(
      c,
      'acme/installer',
      ['1.0.0'],
      buildImage({ labels: { a: 'b' } }),
    );
    assert.deepEqual(await c.listTags('acme/installer'), ['1.0.0']);
    assert.equal((await c.headManifest('acme/installer', '1.0.0'))?.digest, digest);
    const before = c.stats.manifestGet;
    await c.getManifest('acme/installer', '1.0.0');
    assert.equal(
      c.stats.manifestGet,
      before + 1,
      'Basic is sent up front once learned: no 401 round trip',
    );
    assert.equal(c.stats.token, 0);
  });

  it('says credentials are needed when none were given', async () => {
    await rejectsWithCode(
      client().listTags('acme/installer'),
      ErrorCode.RegistryUnauthorized,
      registry.host,
      'acme/installer',
    );
    await assert.rejects(client().ping(), (e: { hint?: string }) =>
      (e.hint ?? '').includes('--username'),
    );
  });

  it('refuses wrong credentials with MOLT_REGISTRY_UNAUTHORIZED', async () => {
    await rejectsWithCode(
      client({ username: 'alice', password: 'wrong' }).getManifest('acme/installer', '1.0.0'),
      ErrorCode.RegistryUnauthorized,
      'acme/installer:1.0.0',
    );
  });
});
