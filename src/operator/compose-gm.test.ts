// SPDX-License-Identifier: Apache-2.0
// The GM checks as the operator runs them: a HEAD by digest on the policy's registry (plain HTTP
// on loopback), the leader's pass logging each change once and recording a warning when a digest
// goes missing, the periodic task checking only while leading, and the declared runner writing
// each ImagePolicy object's `GMImageMissing` condition beside `Accepted`.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { policy } from '../core/images/fixtures.test.ts';
import { buildImage, pushImage } from '../oci/index.ts';
import { useFakeRegistry } from '../testkit/fake-registry-hooks.ts';
import { MemoryOperatorStore } from './adapters/memory-store/operator-store.ts';
import { declaredRunner } from './compose-declared.ts';
import { gmPass, registryExists, startGmChecks } from './compose-gm.ts';
import type { LoadedConfig } from './config.ts';
import { createGmWatch, type GmState } from './images/gm-check.ts';
import type { DeclaredSource, DeclaredVerdict } from './ports/declared.ts';

const config = {
  config: { registry: 'registry.example.com', insecure: false },
} as unknown as LoadedConfig;
const A = `sha256:${'a'.repeat(64)}`;
const web = policy({
  name: 'web',
  repository: 'r.example/acme/web',
  gm: [{ digest: A, reason: 'GM 1.8' }],
});

describe('the GM HEAD on a registry', () => {
  const fake = useFakeRegistry();

  it('is true for a pushed digest, false for one the registry does not have, and fails on a 500', async () => {
    const image = buildImage({
      platform: { os: 'linux', architecture: 'amd64' },
      layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', bytes: new Uint8Array([7]) }],
    });
    const digest = await pushImage(fake.client(), 'acme/web', ['1.8.0-rev1-b1'], image);
    const exists = registryExists(config);
    const repository = `${fake.registry().host}/acme/web`;
    assert.equal(await exists(repository, digest), true);
    assert.equal(await exists(repository, A), false);
    assert.equal(await exists(`${fake.registry().host}/acme/gone`, A), false);
    fake
      .registry()
      .inject({ method: 'HEAD', path: /manifests/, fault: { kind: 'status', status: 500 } });
    await assert.rejects(exists(repository, digest));
    fake.registry().clearFaults();
    const heads = fake
      .registry()
      .requests.filter((r) => r.method === 'HEAD' && r.path.includes(digest));
    assert.ok(heads.length >= 1);
  });
});

describe('the leader’s GM pass', () => {
  it('logs a change once, records one warning when a digest goes missing, and a line when it is back', async () => {
    const store = new MemoryOperatorStore();
    const lines: string[] = [];
    let there = false;
    const watch = createGmWatch({ policies: () => [web], exists: () => Promise.resolve(there) });
    const sink = { store, now: () => 1_000, log: (l: string) => lines.push(l) };
    let states: ReadonlyMap<string, GmState> = new Map();
    states = await gmPass(watch, sink, states);
    states = await gmPass(watch, sink, states);
    there = true;
    states = await gmPass(watch, sink, states);
    await gmPass(watch, sink, states);
    const history = await store.history();
    assert.deepEqual(
      history.map((e) => [e.kind, e.data]),
      [
        [
          'warning',
          { policy: 'web', repository: 'r.example/acme/web', digest: A, reason: 'GM 1.8' },
        ],
      ],
    );
    assert.match(
      history[0]?.message ?? '',
      /GM digest sha256:a+ \(GM 1\.8\) in r\.example\/acme\/web is missing/,
    );
    assert.equal(lines.length, 2);
    assert.match(lines[1] ?? '', /is in the registry again$/);
  });
});

describe('the periodic GM checks', () => {
  it('check only while leading (a standby forgets its findings) and stop cleanly', async () => {
    let leading = false;
    let heads = 0;
    const watch = createGmWatch({
      policies: () => [web],
      exists: () => {
        heads++;
        return Promise.resolve(true);
      },
    });
    const store = new MemoryOperatorStore();
    const checks = startGmChecks({
      watch,
      everyMs: 10,
      leading: () => leading,
      sink: { store, now: () => 0 },
    });
    await new Promise((r) => setTimeout(r, 40));
    assert.equal(heads, 0);
    assert.equal(watch.findings(), undefined);
    leading = true;
    const deadline = Date.now() + 2_000;
    while (watch.findings() === undefined && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(
      watch.findings()?.map((f) => f.state),
      ['present'],
    );
    leading = false;
    await new Promise((r) => setTimeout(r, 40));
    assert.equal(watch.findings(), undefined);
    await checks.stop();
    const after = heads;
    leading = true;
    await new Promise((r) => setTimeout(r, 40));
    assert.equal(heads, after);
  });
});

describe('the declared runner', () => {
  it('writes an ImagePolicy object’s GMImageMissing condition beside Accepted', async () => {
    const reported: DeclaredVerdict[][] = [];
    const source: DeclaredSource = {
      read: () =>
        Promise.resolve({
          pools: [],
          holds: [],
          requests: [],
          images: [{ name: 'web', policy: web, generation: 3 }],
        }),
      report: (v) => {
        reported.push([...v]);
        return Promise.resolve();
      },
      release: () => Promise.resolve(),
      objectName: (id) => id,
      warn: () => Promise.resolve(),
    };
    const watch = createGmWatch({ policies: () => [web], exists: () => Promise.resolve(false) });
    const runner = declaredRunner({
      source,
      filePools: [],
      fileMachines: new Set(),
      setPools: () => undefined,
      store: new MemoryOperatorStore(),
      log: () => undefined,
      gm: watch,
    });
    await runner.refresh();
    await watch.check();
    await runner.refresh();
    const conditions = reported.map((r) => r.find((v) => v.name === 'web')?.conditions);
    assert.deepEqual(
      conditions.map((c) => c?.map((x) => [x.type, x.status, x.reason])),
      [
        [['GMImageMissing', 'Unknown', 'NotCheckedYet']],
        [['GMImageMissing', 'True', 'DigestMissing']],
      ],
    );
    assert.match(conditions[1]?.[0]?.message ?? '', /sha256:a+ \(GM 1\.8\)/);
  });
});
