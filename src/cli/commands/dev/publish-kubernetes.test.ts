// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { planBundle } from '../../../core/kubernetes/bundle.ts';
import { createRegistryClient } from '../../../oci/index.ts';
import { tempDir } from '../../../platform/process/managed-process.ts';
import { startFakeRegistry, type FakeRegistry } from '../../../testkit/fake-registry.ts';
import { fakeBinary } from '../../../testkit/kube-bundle.ts';
import { memoryIo } from '../../io.ts';
import { main } from '../../main.ts';

let registry: FakeRegistry;
let bins: { path: string; remove(): Promise<void> };

async function molt(args: string[]) {
  const io = memoryIo({});
  const code = await main(args, io);
  return { code, stdout: io.stdout(), stderr: io.stderr() };
}

const publish = (version: string, extra: string[] = []) =>
  molt([
    'dev',
    'publish-kubernetes',
    '--version',
    version,
    '--from',
    bins.path,
    '--registry',
    registry.host,
    '--repository',
    'molt/kubernetes',
    '--insecure',
    ...extra,
  ]);

before(async () => {
  registry = await startFakeRegistry();
  bins = await tempDir('kube-bins');
  for (const n of ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubectl']) {
    await writeFile(join(bins.path, n), fakeBinary(n, 'v1.36.3'));
    await chmod(join(bins.path, n), 0o755);
  }
});

after(async () => {
  await registry.close();
  await bins.remove();
});

describe('molt dev publish-kubernetes', () => {
  it('publishes the binaries as a bundle tagged with the version, and prints its digest', async () => {
    const r = await publish('v1.36.3', ['-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { bundle: string; tags: string[] };
    assert.match(out.bundle, new RegExp(`^${registry.host}/molt/kubernetes@sha256:[0-9a-f]{64}$`));
    assert.deepEqual(out.tags, ['v1.36.3']);
    const client = createRegistryClient({ registry: registry.host, insecure: true });
    try {
      const m = await client.getManifest('molt/kubernetes', 'v1.36.3');
      assert.equal(m.digest, out.bundle.slice(out.bundle.indexOf('@') + 1));
      const plan = planBundle(m.json, { maxBytes: 1e6, version: 'v1.36.3', what: out.bundle });
      assert.deepEqual(
        plan.binaries.map((b) => b.name),
        ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubectl'],
      );
      const api = plan.binaries[0];
      assert.ok(api !== undefined);
      assert.deepEqual(
        new Uint8Array(await client.getBlob('molt/kubernetes', api.digest)),
        fakeBinary('kube-apiserver', 'v1.36.3'),
        'an uncompressed layer is the binary itself',
      );
    } finally {
      await client.close();
    }
  });

  it('refuses binaries that are another version than the one named, before pushing', async () => {
    const pushes = registry.requests.length;
    const r = await publish('v1.35.4');
    assert.equal(r.code, 1);
    assert.match(r.stderr, /MOLT_BAD_FLAG: .* holds Kubernetes v1\.36\.3, not v1\.35\.4/);
    assert.equal(registry.requests.length, pushes, 'nothing was sent');
  });

  it('refuses a directory without the control-plane binaries and a version that is not one', async () => {
    const empty = await tempDir('empty-bins');
    try {
      const r = await molt([
        'dev',
        'publish-kubernetes',
        '--version',
        'v1.36.3',
        '--from',
        empty.path,
        '--registry',
        registry.host,
        '--repository',
        'molt/kubernetes',
      ]);
      assert.match(
        r.stderr,
        /MOLT_BAD_FLAG: --from .* has no kube-apiserver, kube-controller-manager, kube-scheduler/,
      );
    } finally {
      await empty.remove();
    }
    assert.match(
      (await publish('1.36')).stderr,
      /MOLT_BAD_FLAG: --version must be a Kubernetes version/,
    );
  });
});
