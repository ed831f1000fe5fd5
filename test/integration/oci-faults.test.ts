// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../../src/protocol/index.ts';
import {
  MediaType,
  buildImage,
  createRegistryClient,
  pushImage,
  type OciClientOptions,
  type OciRegistryClient,
} from '../../src/oci/index.ts';
import { startFakeRegistry, type FakeRegistry } from '../../src/testkit/fake-registry.ts';
import { freePort } from '../../src/platform/process/free-port.ts';
import { rejectsWithCode } from '../../src/testkit/registry-conformance.ts';

const repo = 'acme/installer';
const payload = new TextEncoder().encode('layer payload '.repeat(100));
const image = buildImage({
  labels: { a: 'b' },
  layers: [{ mediaType: MediaType.OciLayer, bytes: payload }],
});
const layerDigest = image.layers[0]?.descriptor.digest ?? '';
const configDigest = image.config.descriptor.digest;

let fake: FakeRegistry;
let digest: string;
const clients: OciRegistryClient[] = [];

/** A client for the fake with fast retries; closed after the file. */
function client(options: Partial<OciClientOptions> = {}): OciRegistryClient {
  const c = createRegistryClient({
    registry: fake.host,
    insecure: true,
    backoffMs: 5,
    timeoutMs: 2_000,
    ...options,
  });
  clients.push(c);
  return c;
}

const count = (path: RegExp): number => fake.requests.filter((r) => path.test(r.path)).length;

before(async () => {
  fake = await startFakeRegistry();
  digest = await pushImage(client(), repo, ['1.0.0'], image);
});
beforeEach(() => {
  fake.clearFaults();
  fake.redirectBlobsTo(undefined);
  fake.requests.length = 0;
});
after(async () => {
  for (const c of clients) await c.close();
  await fake.close();
});

describe('retries', () => {
  it('retries 5xx with backoff and succeeds when the registry recovers', async () => {
    fake.inject({ path: /\/manifests\//, fault: { kind: 'status', status: 503 }, times: 2 });
    const c = client();
    assert.equal((await c.getManifest(repo, '1.0.0')).digest, digest);
    assert.equal(c.stats.retries, 2);
    assert.equal(count(/\/manifests\//), 3);
  });

  it('gives up on persistent 5xx with MOLT_REGISTRY_SERVER_ERROR after retries+1 attempts', async () => {
    fake.inject({ fault: { kind: 'status', status: 500, body: 'internal error' } });
    await rejectsWithCode(
      client({ retries: 2 }).getManifest(repo, '1.0.0'),
      ErrorCode.RegistryServerError,
      fake.host,
      `${repo}:1.0.0`,
      '3 attempts',
    );
    assert.equal(count(/\/manifests\//), 3);
  });

  it('honours Retry-After on 429', async () => {
    fake.inject({
      fault: { kind: 'status', status: 429, headers: { 'retry-after': '1' } },
      times: 1,
    });
    const started = performance.now();
    await client().getManifest(repo, '1.0.0');
    assert.ok(performance.now() - started >= 950, 'waited the second the registry asked for');
  });

  it('does not wait out an hour-long Retry-After: MOLT_REGISTRY_RATE_LIMITED at once', async () => {
    fake.inject({ fault: { kind: 'status', status: 429, headers: { 'retry-after': '3600' } } });
    await rejectsWithCode(client().listTags(repo), ErrorCode.RegistryRateLimited, fake.host);
    assert.equal(count(/tags\/list/), 1);
  });

  it('never retries other 4xx', async () => {
    fake.inject({
      fault: { kind: 'status', status: 403, body: '{"errors":[{"code":"DENIED","message":"no"}]}' },
    });
    await rejectsWithCode(
      client().getManifest(repo, '1.0.0'),
      ErrorCode.RegistryForbidden,
      'DENIED',
    );
    assert.equal(count(/\/manifests\//), 1);
  });

  it('retries reset connections and maps persistent ones to MOLT_REGISTRY_UNREACHABLE', async () => {
    fake.inject({ fault: { kind: 'reset' }, times: 1 });
    assert.equal((await client().getManifest(repo, '1.0.0')).digest, digest);
    fake.inject({ fault: { kind: 'reset' } });
    await rejectsWithCode(
      client({ retries: 1 }).getManifest(repo, '1.0.0'),
      ErrorCode.RegistryUnreachable,
      fake.host,
    );
  });

  it('maps a closed port to MOLT_REGISTRY_UNREACHABLE', async () => {
    const c = createRegistryClient({
      registry: `127.0.0.1:${await freePort()}`,
      insecure: true,
      retries: 0,
    });
    clients.push(c);
    await rejectsWithCode(c.ping(), ErrorCode.RegistryUnreachable, 'ECONNREFUSED');
  });
});

describe('timeouts', () => {
  it('times out a registry that does not answer', async () => {
    fake.inject({ fault: { kind: 'delay', ms: 1_500 } });
    await rejectsWithCode(
      client({ timeoutMs: 200, retries: 1 }).getManifest(repo, '1.0.0'),
      ErrorCode.RegistryTimeout,
      fake.host,
      '200 ms',
      '2 attempts',
    );
  });

  it('times out a body that stalls halfway', async () => {
    fake.inject({ path: /\/blobs\//, fault: { kind: 'stall', afterBytes: 10 } });
    await rejectsWithCode(
      client({ timeoutMs: 200, retries: 0 }).getBlob(repo, layerDigest),
      ErrorCode.RegistryTimeout,
    );
    const stream = await client({ timeoutMs: 200, retries: 0 }).streamBlob(repo, layerDigest);
    await rejectsWithCode(new Response(stream).arrayBuffer(), ErrorCode.RegistryTimeout);
  });
});

describe('content checks', () => {
  it('refuses a manifest whose announced digest is not its content', async () => {
    fake.inject({ fault: { kind: 'wrong-digest' } });
    await rejectsWithCode(
      client().getManifest(repo, '1.0.0'),
      ErrorCode.DigestMismatch,
      `${repo}:1.0.0`,
    );
  });

  it('refuses a manifest fetched by digest whose bytes were altered', async () => {
    fake.inject({ fault: { kind: 'corrupt-body' } });
    await rejectsWithCode(client().getManifest(repo, digest), ErrorCode.DigestMismatch, digest);
  });

  it('refuses a corrupted blob, and errors a corrupted stream only at its end', async () => {
    fake.inject({ path: /\/blobs\//, fault: { kind: 'corrupt-body' } });
    await rejectsWithCode(client().getBlob(repo, layerDigest), ErrorCode.DigestMismatch);
    const reader = (await client().streamBlob(repo, layerDigest)).getReader();
    let received = 0;
    const failure = await (async () => {
      for (;;) {
        const r = await reader.read();
        if (r.done) return undefined;
        received += r.value.byteLength;
      }
    })().catch((e: unknown) => e);
    assert.equal(received, payload.byteLength);
    assert.ok(isMoltError(failure, ErrorCode.DigestMismatch));
  });

  it('refuses manifests over the limit by Content-Length and while reading a chunked body', async () => {
    fake.inject({
      path: /\/manifests\//,
      fault: { kind: 'oversize', bytes: 5 * 1024 * 1024 },
      times: 1,
    });
    await rejectsWithCode(
      client().getManifest(repo, '1.0.0'),
      ErrorCode.ManifestTooLarge,
      '4194304',
    );
    fake.inject({
      path: /\/manifests\//,
      fault: { kind: 'oversize', bytes: 5000, declareLength: false },
      times: 1,
    });
    await rejectsWithCode(
      client({ maxManifestBytes: 4096 }).getManifest(repo, '1.0.0'),
      ErrorCode.ManifestTooLarge,
    );
    fake.inject({
      path: /\/blobs\//,
      fault: { kind: 'oversize', bytes: 5 * 1024 * 1024 },
      times: 1,
    });
    await rejectsWithCode(client().getBlob(repo, configDigest), ErrorCode.BlobTooLarge);
  });

  it('maps garbage JSON, foreign content types and mediaType disagreements to codes', async () => {
    fake.inject({ path: /\/manifests\//, fault: { kind: 'garbage' }, times: 1 });
    await rejectsWithCode(
      client().getManifest(repo, '1.0.0'),
      ErrorCode.ManifestInvalid,
      'not JSON',
    );
    fake.inject({ path: /tags\/list/, fault: { kind: 'garbage' }, times: 1 });
    await rejectsWithCode(client().listTags(repo), ErrorCode.RegistryProtocol);
    fake.inject({
      path: /\/manifests\//,
      fault: { kind: 'content-type', contentType: 'text/html' },
      times: 2,
    });
    await rejectsWithCode(
      client().getManifest(repo, '1.0.0'),
      ErrorCode.UnsupportedMediaType,
      'text/html',
    );
    await rejectsWithCode(client().headManifest(repo, '1.0.0'), ErrorCode.UnsupportedMediaType);
    fake.inject({
      path: /\/manifests\//,
      fault: { kind: 'content-type', contentType: MediaType.OciIndex },
      times: 1,
    });
    await rejectsWithCode(
      client().getManifest(repo, '1.0.0'),
      ErrorCode.ManifestInvalid,
      MediaType.OciManifest,
    );
  });

  it('reads plain-text 404 pages and 401s without a challenge', async () => {
    fake.inject({ fault: { kind: 'status', status: 404, body: '404 page not found\n' }, times: 1 });
    await rejectsWithCode(
      client().getManifest(repo, '1.0.0'),
      ErrorCode.RegistryNotFound,
      '404 page not found',
    );
    fake.inject({ fault: { kind: 'status', status: 401 }, times: 1 });
    await rejectsWithCode(client().ping(), ErrorCode.RegistryUnauthorized, fake.host);
  });

  it('refuses references and repositories outside the grammar before sending anything', async () => {
    await rejectsWithCode(
      client().getManifest(repo, '1.9.0+build5'),
      ErrorCode.InvalidReference,
      '1.9.0+build5',
    );
    await rejectsWithCode(client().listTags('Acme/Installer'), ErrorCode.InvalidReference);
    assert.equal(fake.requests.length, 0);
  });

  it('refuses plain HTTP unless insecure', () => {
    assert.throws(
      () => createRegistryClient({ registry: fake.url }),
      (e: unknown) => isMoltError(e, ErrorCode.BadInput),
    );
  });
});

describe('transport', () => {
  it('keeps Authorization off a redirect to another host', async () => {
    const authed = await startFakeRegistry({ basicAuth: { username: 'u', password: 'p' } });
    try {
      const c = createRegistryClient({
        registry: authed.host,
        insecure: true,
        credentials: { username: 'u', password: 'p' },
      });
      clients.push(c);
      await pushImage(c, repo, ['1.0.0'], image);
      authed.redirectBlobsTo(authed.altOrigin);
      authed.requests.length = 0;
      assert.deepEqual(Buffer.from(await c.getBlob(repo, layerDigest)), Buffer.from(payload));
      const hits = authed.requests.filter((r) => r.path.includes(layerDigest));
      const first = hits[0];
      const storage = hits[1];
      assert.match(first?.authorization ?? '', /^Basic /);
      assert.equal(storage?.path.startsWith('/_storage/'), true);
      assert.equal(storage.authorization, undefined);
    } finally {
      await authed.close();
    }
  });

  it('caps concurrent requests per client', async () => {
    const slow = await startFakeRegistry();
    try {
      const seeder = createRegistryClient({ registry: slow.host, insecure: true });
      clients.push(seeder);
      await pushImage(seeder, repo, ['1.0.0'], image);
      slow.inject({ path: /\/manifests\//, method: 'GET', fault: { kind: 'delay', ms: 50 } });
      const c = createRegistryClient({ registry: slow.host, insecure: true, concurrency: 2 });
      clients.push(c);
      await Promise.all(Array.from({ length: 8 }, () => c.getManifest(repo, '1.0.0')));
      assert.equal(c.stats.manifestGet, 8);
      assert.equal(slow.peakInFlight(), 2);
    } finally {
      await slow.close();
    }
  });

  it('sends the four manifest types in Accept on GET and HEAD', async () => {
    await client().headManifest(repo, '1.0.0');
    await client().getManifest(repo, '1.0.0');
    const accepts = fake.requests
      .filter((r) => r.path.includes('/manifests/'))
      .map((r) => r.accept ?? '');
    assert.equal(accepts.length, 2);
    for (const a of accepts)
      for (const t of [
        MediaType.OciIndex,
        MediaType.OciManifest,
        MediaType.DockerManifestList,
        MediaType.DockerManifest,
      ])
        assert.ok(a.includes(t));
  });
});
