// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../protocol/index.ts';
import {
  MediaType,
  buildArtifact,
  buildImage,
  buildIndex,
  createRegistryClient,
  pushImage,
  pushReferrer,
  type OciRegistryClient,
  type RegistryClientOptions,
} from '../oci/index.ts';

/** A registry the conformance suite can run against. */
export interface ConformanceTarget {
  readonly name: string;
  /** Start the registry; return options for a client that can push to it, and how to stop it. */
  start(): Promise<{ readonly client: RegistryClientOptions; stop(): Promise<void> }>;
}

const enc = new TextEncoder();
const layer = (text: string): { mediaType: string; bytes: Uint8Array } => ({
  mediaType: MediaType.OciLayer,
  bytes: enc.encode(text),
});

/** Assert `p` rejects with a MoltError of `code` whose message contains every `fragment`. */
export async function rejectsWithCode(
  p: Promise<unknown>,
  code: ErrorCode,
  ...fragments: string[]
): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(isMoltError(e), `expected a MoltError, got ${String(e)}`);
    assert.equal(e.code, code, e.message);
    for (const f of fragments)
      assert.ok(e.message.includes(f), `"${e.message}" should mention "${f}"`);
    return true;
  });
}

/**
 * The behaviours every registry molt supports must show, and the client must handle, registered
 * as node:test cases: push, tag listing, HEAD, manifests of all four types by tag and digest,
 * platform selection, blobs, 404s and referrers (API or tag-schema fallback).
 */
export function registryConformance(target: ConformanceTarget): void {
  describe(`registry conformance: ${target.name}`, () => {
    let env: Awaited<ReturnType<ConformanceTarget['start']>>;
    let client: OciRegistryClient;
    let host: string;
    const amd = buildImage({
      labels: { 'dev.molt.channels': 'stable' },
      created: '2025-03-01T10:00:00Z',
      layers: [layer('amd64 payload')],
    });
    const arm = buildImage({
      labels: { 'dev.molt.channels': 'stable' },
      platform: { os: 'linux', architecture: 'arm64', variant: 'v8' },
      layers: [layer('arm64 payload')],
    });
    const docker = buildImage({
      labels: { kind: 'docker' },
      format: 'docker',
      layers: [{ mediaType: MediaType.DockerLayerGzip, bytes: enc.encode('docker layer') }],
    });
    const dockerArm = buildImage({
      labels: { kind: 'docker-arm' },
      format: 'docker',
      platform: { os: 'linux', architecture: 'arm64' },
    });

    before(async () => {
      env = await target.start();
      client = createRegistryClient({ ...env.client, retries: 0 });
      host = client.registry;
    });
    after(async () => {
      await client.close();
      await env.stop();
    });

    it('answers the API root', async () => {
      await client.ping();
      assert.equal(client.stats.ping >= 1, true);
    });

    it('lists every pushed tag once, sorted', async () => {
      const tags = ['1.9.0', '1.10.0', '1.8.0-rev2-b1042', 'latest', 'B', '1.8.0-rev2'];
      for (const t of tags) await pushImage(client, 'conf/tags', [t], amd);
      assert.deepEqual(await client.listTags('conf/tags'), [...tags].sort());
    });

    it('HEAD by tag and by digest gives the pushed digest, media type and size; a missing tag is undefined', async () => {
      const digest = await pushImage(client, 'conf/head', ['1.0.0'], amd);
      const expected = {
        mediaType: MediaType.OciManifest,
        digest,
        size: amd.manifest.bytes.byteLength,
      };
      assert.deepEqual(await client.headManifest('conf/head', '1.0.0'), expected);
      assert.deepEqual(await client.headManifest('conf/head', digest), expected);
      assert.equal(await client.headManifest('conf/head', 'nope'), undefined);
    });

    it('GET by tag and by digest returns the same verified bytes', async () => {
      const digest = await pushImage(client, 'conf/get', ['1.0.0'], amd);
      const byTag = await client.getManifest('conf/get', '1.0.0');
      const byDigest = await client.getManifest('conf/get', digest);
      assert.equal(byTag.digest, digest);
      assert.equal(byTag.mediaType, MediaType.OciManifest);
      assert.deepEqual(Buffer.from(byDigest.bytes), Buffer.from(amd.manifest.bytes));
    });

    it('resolves an OCI index to linux/amd64 by default and to linux/arm64 on request', async () => {
      const digest = await pushImage(
        client,
        'conf/index',
        ['multi'],
        buildIndex([amd, arm], { annotations: { 'org.opencontainers.image.version': '1.0.0' } }),
      );
      const byDefault = await client.resolveImage('conf/index', 'multi');
      assert.equal(byDefault.digest, digest);
      assert.equal(byDefault.mediaType, MediaType.OciIndex);
      assert.equal(byDefault.manifestDigest, amd.manifest.descriptor.digest);
      assert.equal(byDefault.annotations['org.opencontainers.image.version'], '1.0.0');
      const onArm = await client.resolveImage('conf/index', 'multi', {
        os: 'linux',
        architecture: 'arm64',
      });
      assert.equal(onArm.manifestDigest, arm.manifest.descriptor.digest);
      assert.equal(onArm.config.digest, arm.config.descriptor.digest);
    });

    it('names the platforms an index has when the wanted one is missing', async () => {
      await pushImage(client, 'conf/index', ['multi'], buildIndex([amd, arm]));
      await rejectsWithCode(
        client.resolveImage('conf/index', 'multi', { os: 'linux', architecture: 's390x' }),
        ErrorCode.PlatformNotFound,
        'linux/s390x',
        'linux/amd64',
        'linux/arm64/v8',
      );
    });

    it('serves Docker schema 2 manifests and manifest lists by tag and digest', async () => {
      const single = await pushImage(client, 'conf/docker', ['single'], docker);
      const m = await client.getManifest('conf/docker', single);
      assert.equal(m.mediaType, MediaType.DockerManifest);
      const list = await pushImage(
        client,
        'conf/docker',
        ['list'],
        buildIndex([docker, dockerArm], { format: 'docker' }),
      );
      const resolved = await client.resolveImage('conf/docker', 'list', {
        os: 'linux',
        architecture: 'arm64',
      });
      assert.equal(resolved.digest, list);
      assert.equal(resolved.mediaType, MediaType.DockerManifestList);
      assert.equal(resolved.manifestDigest, dockerArm.manifest.descriptor.digest);
      assert.equal(
        (await client.headManifest('conf/docker', 'list'))?.mediaType,
        MediaType.DockerManifestList,
      );
    });

    it('returns a config blob with the labels and created time that were pushed', async () => {
      await pushImage(client, 'conf/config', ['1.0.0'], amd);
      const image = await client.resolveImage('conf/config', '1.0.0');
      const config = JSON.parse(
        Buffer.from(await client.getBlob('conf/config', image.config.digest)).toString(),
      ) as { created: string; config: { Labels: Record<string, string> } };
      assert.equal(config.created, '2025-03-01T10:00:00Z');
      assert.deepEqual(config.config.Labels, { 'dev.molt.channels': 'stable' });
    });

    it('streams a layer and verifies it', async () => {
      await pushImage(client, 'conf/stream', ['1.0.0'], amd);
      const stream = await client.streamBlob('conf/stream', amd.layers[0]?.descriptor.digest ?? '');
      assert.equal(
        Buffer.from(await new Response(stream).arrayBuffer()).toString(),
        'amd64 payload',
      );
    });

    it('reports missing manifests, repositories and blobs as MOLT_REGISTRY_NOT_FOUND naming what was asked', async () => {
      await pushImage(client, 'conf/missing', ['1.0.0'], amd);
      await rejectsWithCode(
        client.getManifest('conf/missing', '9.9.9'),
        ErrorCode.RegistryNotFound,
        host,
        'conf/missing:9.9.9',
      );
      await rejectsWithCode(
        client.listTags('conf/never-pushed'),
        ErrorCode.RegistryNotFound,
        host,
        'conf/never-pushed',
      );
      await rejectsWithCode(
        client.getBlob('conf/missing', `sha256:${'a'.repeat(64)}`),
        ErrorCode.RegistryNotFound,
        'conf/missing@sha256:aaaa',
      );
    });

    it('skips uploading a blob the registry already has', async () => {
      const blob = enc.encode('shared blob');
      await client.pushBlob('conf/dedupe', blob, MediaType.OciLayer);
      const pushes = client.stats.push;
      const heads = client.stats.blobHead;
      const again = await client.pushBlob('conf/dedupe', blob, MediaType.OciLayer);
      assert.equal(client.stats.push, pushes);
      assert.equal(client.stats.blobHead, heads + 1);
      assert.deepEqual(
        Buffer.from(await client.getBlob('conf/dedupe', again.digest)),
        Buffer.from(blob),
      );
    });

    it('lists referrers of a manifest, filtered by artifact type', async () => {
      const subject = await pushImage(client, 'conf/referrers', ['1.0.0'], amd);
      const descriptor = {
        mediaType: MediaType.OciManifest,
        digest: subject,
        size: amd.manifest.bytes.byteLength,
      };
      const sig = buildArtifact({
        artifactType: 'application/vnd.dev.sigstore.bundle.v0.3+json',
        subject: descriptor,
        blobs: [
          {
            mediaType: 'application/vnd.dev.sigstore.bundle.v0.3+json',
            bytes: enc.encode('{"bundle":1}'),
          },
        ],
      });
      const sbom = buildArtifact({
        artifactType: 'application/spdx+json',
        subject: descriptor,
        blobs: [{ mediaType: 'application/spdx+json', bytes: enc.encode('{}') }],
        annotations: { 'org.example': 'x' },
      });
      await pushReferrer(client, 'conf/referrers', sig);
      await pushReferrer(client, 'conf/referrers', sbom);
      const all = await client.listReferrers('conf/referrers', subject);
      assert.deepEqual(
        all.map((d) => d.digest).sort(),
        [sig.manifest.descriptor.digest, sbom.manifest.descriptor.digest].sort(),
      );
      const sigs = await client.listReferrers(
        'conf/referrers',
        subject,
        'application/vnd.dev.sigstore.bundle.v0.3+json',
      );
      assert.deepEqual(
        sigs.map((d) => d.digest),
        [sig.manifest.descriptor.digest],
      );
      assert.deepEqual(
        await client.listReferrers('conf/referrers', amd.config.descriptor.digest),
        [],
      );
    });
  });
}
