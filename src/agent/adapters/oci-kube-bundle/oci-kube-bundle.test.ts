// SPDX-License-Identifier: Apache-2.0
// The bundle store against the fake registry: by digest, verified, bounded, staged once.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { ErrorCode, isMoltError } from '../../../core/errors.ts';
import { createRegistryClient, type OciRegistryClient } from '../../../oci/index.ts';
import { tempDir } from '../../../platform/process/managed-process.ts';
import { attachLegacySignature, generateKeyPair, signLegacy } from '../../../releases/index.ts';
import { startFakeRegistry, type FakeRegistry } from '../../../testkit/fake-registry.ts';
import { fakeBinary, pushKubeBundle } from '../../../testkit/kube-bundle.ts';
import { createOciKubeBundles } from './index.ts';

const run = promisify(execFile);
const repo = 'molt/kubernetes';
let registry: FakeRegistry;
let client: OciRegistryClient;
let v136: string;

const code =
  (c: string, pattern = /./) =>
  (e: unknown): boolean =>
    isMoltError(e) && e.code === c && pattern.test(e.message);

async function store(o: { maxBytes?: number; publicKeyPem?: string } = {}) {
  const dir = await tempDir('bundles');
  const bundles = createOciKubeBundles({
    root: dir.path,
    registry: { insecure: true, retries: 0 },
    maxBytes: o.maxBytes ?? 1024 * 1024,
    ...(o.publicKeyPem !== undefined && { publicKeyPem: o.publicKeyPem }),
  });
  return { dir, bundles };
}

before(async () => {
  registry = await startFakeRegistry();
  client = createRegistryClient({ registry: registry.host, insecure: true });
  v136 = `${registry.host}/${repo}@${await pushKubeBundle(client, repo, 'v1.36.3')}`;
});

after(async () => {
  await client.close();
  await registry.close();
});

describe('Kubernetes bundles staged from a registry', () => {
  it('stages every binary, executable, under state/kubernetes/<digest hex>, once', async () => {
    const { dir, bundles } = await store();
    try {
      const staged = await bundles.stage(v136, 'v1.36.3');
      const hex = v136.slice(-64);
      assert.deepEqual(staged, {
        bundle: v136,
        version: 'v1.36.3',
        dir: join(dir.path, 'state', 'kubernetes', hex),
      });
      assert.equal(bundles.dirFor(v136), staged.dir);
      const api = join(staged.dir, 'kube-apiserver');
      assert.equal((await stat(api)).mode & 0o777, 0o755);
      assert.deepEqual(
        new Uint8Array(await readFile(api)),
        fakeBinary('kube-apiserver', 'v1.36.3'),
      );
      const gets = registry.requests.filter((r) => r.method === 'GET').length;
      assert.deepEqual(await bundles.stage(v136), staged);
      assert.equal(
        registry.requests.filter((r) => r.method === 'GET').length,
        gets,
        'a staged bundle is not fetched again',
      );
      assert.deepEqual(await bundles.staged(), [staged]);
      assert.deepEqual(
        (await readdir(join(dir.path, 'state', 'kubernetes'))).filter((n) => n.startsWith('.')),
        [],
        'no staging directory left',
      );
    } finally {
      await dir.remove();
    }
  });

  it('refuses a bundle of another version than the apply names', async () => {
    const { dir, bundles } = await store();
    try {
      await assert.rejects(
        bundles.stage(v136, 'v1.35.4'),
        code(ErrorCode.KubeBundleInvalid, /v1\.36\.3, not v1\.35\.4/),
      );
      await bundles.stage(v136);
      await assert.rejects(bundles.stage(v136, 'v1.35.4'), code(ErrorCode.KubeBundleInvalid));
    } finally {
      await dir.remove();
    }
  });

  it('refuses a reference by tag, and a bundle over the size bound before a binary is fetched', async () => {
    const { dir, bundles } = await store({ maxBytes: 100 });
    try {
      await assert.rejects(
        bundles.stage(`${registry.host}/${repo}:v1.36.3`),
        code(ErrorCode.BadInput, /by digest only/),
      );
      const blobGets = (): number =>
        registry.requests.filter((r) => r.method === 'GET' && r.path.includes('/blobs/')).length;
      const before = blobGets();
      await assert.rejects(
        bundles.stage(v136),
        code(ErrorCode.KubeBundleInvalid, /over the 100-byte/),
      );
      assert.equal(blobGets(), before);
      assert.deepEqual(await bundles.staged(), []);
    } finally {
      await dir.remove();
    }
  });

  const needsRoot = process.getuid?.() === 0 ? false : 'needs root (mounts a tmpfs)';
  it(
    'refuses, before fetching a binary, a bundle the filesystem cannot hold',
    { skip: needsRoot },
    async () => {
      const { dir, bundles } = await store();
      const kube = join(dir.path, 'state', 'kubernetes');
      await mkdir(kube, { recursive: true });
      await run('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', kube]);
      try {
        const blobGets = (): number =>
          registry.requests.filter((r) => r.method === 'GET' && r.path.includes('/blobs/')).length;
        const before = blobGets();
        await assert.rejects(
          bundles.stage(v136),
          (e: unknown) =>
            code(ErrorCode.NoSpace, /needs \d+ MiB and the filesystem .* has 2 MiB free/)(e) &&
            /--state-size/.test((e as { hint?: string }).hint ?? ''),
        );
        assert.equal(blobGets(), before, 'no binary fetched');
        assert.deepEqual(await readdir(kube), [], 'nothing left behind');
      } finally {
        await run('umount', [kube]);
        await dir.remove();
      }
    },
  );

  it('stages nothing when a binary’s bytes do not match its digest', async () => {
    const { dir, bundles } = await store();
    registry.inject({
      method: 'GET',
      path: /\/blobs\//,
      fault: { kind: 'corrupt-body' },
      times: 1,
    });
    try {
      await assert.rejects(bundles.stage(v136), code(ErrorCode.DigestMismatch));
      assert.deepEqual(await bundles.staged(), []);
      assert.deepEqual(await readdir(join(dir.path, 'state', 'kubernetes')), []);
    } finally {
      registry.clearFaults();
      await dir.remove();
    }
  });

  it('requires a signature when the machine has a key, and accepts a signed bundle', async () => {
    const keys = generateKeyPair();
    const { dir, bundles } = await store({ publicKeyPem: keys.publicKeyPem });
    try {
      await assert.rejects(bundles.stage(v136), code(ErrorCode.SignatureMissing));
      const digest = v136.slice(v136.indexOf('@') + 1);
      await attachLegacySignature({
        client,
        repository: repo,
        digest,
        signature: signLegacy({
          privateKeyPem: keys.privateKeyPem,
          digest,
          reference: `${registry.host}/${repo}`,
        }),
      });
      assert.equal((await bundles.stage(v136)).version, 'v1.36.3');
    } finally {
      await dir.remove();
    }
  });
});
