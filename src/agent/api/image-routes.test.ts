// SPDX-License-Identifier: Apache-2.0
// The image routes: every role reads; only operator and admin certificates set the list (a node
// certificate is refused before anything is pulled); the list is bounded, unique and by digest;
// a machine without a node runtime answers MOLT_NOT_KUBERNETES_NODE; the typed client works; a
// pull that outlasts the listener's idle timeout still gets its answer.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fetch } from 'undici';
import { ErrorCode } from '../../core/errors.ts';
import { limitedServerFactory } from '../../platform/https/listener.ts';
import { ErrorBody, type Role } from '../../protocol/agent.ts';
import { ImageRoutes, MaxPinnedImages } from '../../protocol/agent-images.ts';
import { createImagesAgentClient } from '../../protocol/agent-images-client.ts';
import { createPinnedImages } from '../machine/pinned-images.ts';
import { createFakeImagePins, createMemoryPinnedRecord } from '../ports/image-pins.fake.ts';
import { createMemoryJournalStore } from '../ports/journal-store.fake.ts';
import { injectFetch } from '../../testkit/inject-fetch.ts';
import { buildAgentApp } from './routes.ts';
import { createFakeAgentService } from './service.fake.ts';

const ref = (hex: string): string => `reg:5000/molt/dns@sha256:${hex.repeat(64)}`;

function setup(role: Role, node = true) {
  const pins = createFakeImagePins([ref('a'), ref('b')]);
  const app = buildAgentApp({
    service: createFakeAgentService(),
    journal: createMemoryJournalStore(),
    identify: () => ({ name: `${role}-1`, role }),
    ...(node && { pinnedImages: createPinnedImages({ pins, record: createMemoryPinnedRecord() }) }),
  });
  const put = (payload: unknown) =>
    app.inject({ method: 'PUT', url: ImageRoutes.pinned, payload: payload as object });
  return { app, pins, put };
}

const codeOf = (body: string): string => ErrorBody.parse(JSON.parse(body)).code;

describe('agent API: pinned images', () => {
  it('lets the operator set the list through the typed client, and reads it back', async () => {
    const { app, pins } = setup('operator');
    const client = createImagesAgentClient({
      baseUrl: 'http://agent',
      fetch: injectFetch(app),
    });
    assert.deepEqual(await client.setPinnedImages({ images: [ref('a'), ref('b')] }), {
      pinned: [ref('a'), ref('b')],
      unpinned: [],
    });
    assert.deepEqual(await client.setPinnedImages({ images: [ref('b')] }), {
      pinned: [ref('b')],
      unpinned: [ref('a')],
    });
    assert.deepEqual(await client.pinnedImages(), { pinned: [ref('b')] });
    assert.deepEqual(await pins.pinned(), [ref('b')]);
  });

  it('lets an admin set it, and a node only read it', async () => {
    const admin = setup('admin');
    assert.equal((await admin.put({ images: [ref('a')] })).statusCode, 200);
    const node = setup('node');
    const refused = await node.put({ images: [ref('a')] });
    assert.equal(refused.statusCode, 403);
    assert.equal(codeOf(refused.body), ErrorCode.Forbidden);
    assert.deepEqual(node.pins.pulls, []);
    const read = await node.app.inject({ method: 'GET', url: ImageRoutes.pinned });
    assert.equal(read.statusCode, 200);
    assert.deepEqual(JSON.parse(read.body), { pinned: [] });
  });

  it('refuses a tag, a reference without its registry, duplicates, unknown fields and too many', async () => {
    const { put, pins } = setup('operator');
    const digest = `sha256:${'a'.repeat(64)}`;
    for (const images of [
      ['reg:5000/molt/dns:1.2'],
      [`molt/dns@${digest}`],
      [`reg:5000/molt/dns@sha256:${'a'.repeat(63)}`],
      [ref('a'), ref('a')],
      Array.from({ length: MaxPinnedImages + 1 }, (_, i) =>
        ref('0').replace(/0{8}$/, i.toString(16).padStart(8, '0')),
      ),
    ]) {
      const res = await put({ images });
      assert.equal(res.statusCode, 400, JSON.stringify(images).slice(0, 100));
      assert.equal(codeOf(res.body), ErrorCode.BadInput);
    }
    assert.equal((await put({ images: [ref('a')], extra: 1 })).statusCode, 400);
    assert.equal((await put({})).statusCode, 400);
    assert.deepEqual(pins.pulls, []);
  });

  it('answers MOLT_IMAGE_PIN_FAILED (502) naming an image the registry lacks', async () => {
    const { put } = setup('operator');
    const res = await put({ images: [ref('c')] });
    assert.equal(res.statusCode, 502);
    assert.equal(codeOf(res.body), ErrorCode.ImagePinFailed);
    assert.ok(res.body.includes(ref('c')));
  });

  it('answers MOLT_NOT_KUBERNETES_NODE on a machine without a node runtime', async () => {
    const { app, put } = setup('operator', false);
    for (const res of [
      await put({ images: [ref('a')] }),
      await app.inject({ method: 'GET', url: ImageRoutes.pinned }),
    ]) {
      assert.equal(res.statusCode, 409);
      assert.equal(codeOf(res.body), ErrorCode.NotKubernetesNode);
    }
  });

  it('keeps the connection of pulls that outlast the listener’s idle timeout', async () => {
    const pins = createFakeImagePins([ref('a')]);
    const pin = pins.pin.bind(pins);
    pins.pin = async (name) => {
      await new Promise((r) => setTimeout(r, 1_200));
      await pin(name);
    };
    const app = buildAgentApp(
      {
        service: createFakeAgentService(),
        journal: createMemoryJournalStore(),
        identify: () => ({ name: 'operator-1', role: 'operator' }),
        pinnedImages: createPinnedImages({ pins, record: createMemoryPinnedRecord() }),
      },
      {
        serverFactory: limitedServerFactory(undefined, {
          idleTimeoutMs: 300,
          requestTimeoutMs: 300,
        }),
      },
    );
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const res = await fetch(`${url}${ImageRoutes.pinned}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ images: [ref('a')] }),
      });
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { pinned: [ref('a')], unpinned: [] });
    } finally {
      await app.close();
    }
  });
});
