// SPDX-License-Identifier: Apache-2.0
// The lab kubelet's image readiness against the fake registry: the label decides, an index is read
// for linux/amd64, verdicts are cached by digest, an unreadable image is ready.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  buildImage,
  buildIndex,
  createRegistryClient,
  pushImage,
  type OciRegistryClient,
} from '../../../oci/index.ts';
import { startFakeRegistry, type FakeRegistry } from '../../../testkit/fake-registry.ts';
import { createImageReadiness, LabReadyLabel } from './image-readiness.ts';

let registry: FakeRegistry;
let client: OciRegistryClient;
const image = (labels: Record<string, string>, architecture = 'amd64') =>
  buildImage({ labels, platform: { os: 'linux', architecture } });

before(async () => {
  registry = await startFakeRegistry();
  client = createRegistryClient({ registry: registry.host, insecure: true });
  await pushImage(client, 'app', ['good'], image({ other: 'x' }));
  await pushImage(client, 'app', ['bad'], image({ [LabReadyLabel]: 'false' }));
  await pushImage(client, 'app', ['true'], image({ [LabReadyLabel]: 'true' }));
  const badAmd = [image({ [LabReadyLabel]: 'false' }), image({}, 'arm64')];
  await pushImage(client, 'app', ['index-bad-amd64'], buildIndex(badAmd));
  const badArm = [image({}), image({ [LabReadyLabel]: 'false' }, 'arm64')];
  await pushImage(client, 'app', ['index-bad-arm64'], buildIndex(badArm));
});

after(async () => {
  await client.close();
  await registry.close();
});

describe('image readiness in the lab', () => {
  it('is decided by the dev.molt.lab.ready label, an index by its linux/amd64 image', async () => {
    const r = createImageReadiness({ registry: { insecure: true } });
    try {
      const at = (tag: string) => r.check(`${registry.host}/app:${tag}`);
      assert.deepEqual(await at('good'), { ready: true });
      assert.deepEqual(await at('true'), { ready: true });
      assert.deepEqual(await at('bad'), {
        ready: false,
        reason: `image ${registry.host}/app:bad is labelled ${LabReadyLabel}=false`,
      });
      assert.equal((await at('index-bad-amd64')).ready, false);
      assert.equal((await at('index-bad-arm64')).ready, true);
    } finally {
      await r.close();
    }
  });

  it('caches by digest: a digest reference read once is never fetched again', async () => {
    const r = createImageReadiness({ registry: { insecure: true } });
    try {
      const digest = (await client.headManifest('app', 'bad'))?.digest ?? '';
      const ref = `${registry.host}/app:bad@${digest}`;
      assert.equal((await r.check(ref)).ready, false);
      const seen = registry.requests.length;
      assert.equal((await r.check(ref)).ready, false);
      assert.equal((await r.check(`${registry.host}/app@${digest}`)).ready, false);
      assert.equal(registry.requests.length, seen);
    } finally {
      await r.close();
    }
  });

  it('says ready, and why, for an image it cannot read', async () => {
    const errors: string[] = [];
    const r = createImageReadiness({
      registry: { insecure: true, retries: 0 },
      onError: (i) => errors.push(i),
    });
    try {
      const missing = `${registry.host}/app:nope`;
      const [v, again] = await Promise.all([r.check(missing), r.check(missing)]);
      assert.equal(v.ready, true);
      assert.match(v.reason ?? '', /^not read: /);
      assert.deepEqual(again, v);
      // Not asked again until retryMs: one attempt for every pod on it meanwhile.
      const seen = registry.requests.length;
      assert.deepEqual(await r.check(missing), v);
      assert.equal(registry.requests.length, seen);
      assert.deepEqual(errors, [missing]);
    } finally {
      await r.close();
    }
  });
});
