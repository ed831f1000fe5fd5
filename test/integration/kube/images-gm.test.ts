// SPDX-License-Identifier: Apache-2.0
// Issue 19 (docs/adr/0013 decision 5): GM images stay in the registry — on the real registry
// (Debian's distribution 2.8) and a real control plane. An image is pushed and its digest pinned GM
// by an ImagePolicy object; the operator's parts (the GM watch HEADing through molt's OCI client,
// the leader's pass, the declared runner over the kube-declared adapter as molt-operator under the
// shipped RBAC) say it is present (`GMImageMissing=False`, metric 0). Its manifest is deleted
// through the registry API: it is missing (`GMImageMissing=True` naming it, metric 1, one warning
// in the history). The registry stopped: unknown (`Unknown`, no sample) — never missing.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import type { KubeConfig } from '@kubernetes/client-node';
import {
  startKubeControlPlane,
  type KubeControlPlane,
} from '../../../src/lab/services/kube-control-plane.ts';
import { buildImage, createRegistryClient, pushImage } from '../../../src/oci/index.ts';
import { createKubeDeclared } from '../../../src/operator/adapters/kube-declared/index.ts';
import { MemoryOperatorStore } from '../../../src/operator/adapters/memory-store/operator-store.ts';
import { imageFamilies } from '../../../src/operator/api/metrics-images.ts';
import { declaredRunner } from '../../../src/operator/compose-declared.ts';
import { gmPass, gmWatchOf } from '../../../src/operator/compose-gm.ts';
import type { LoadedConfig } from '../../../src/operator/config.ts';
import type { GmState } from '../../../src/operator/images/gm-check.ts';
import { loadKubeConfig } from '../../../src/platform/kube/client.ts';
import { eventually } from '../../../src/platform/process/managed-process.ts';
import { scratchDir } from '../../../src/testkit/scratch-dir.ts';
import { startRegistry, type TestRegistry } from '../../../src/testkit/registry-process.ts';
import type { ImagePolicy } from '../../../src/core/images/types.ts';

const exec = promisify(execFile);
const ns = 'molt-system';
let cp: KubeControlPlane;
let registry: TestRegistry;
let operator: KubeConfig;

const kubectl = async (...args: string[]): Promise<string> =>
  (await exec(join(cp.bins, 'kubectl'), ['--kubeconfig', cp.admin.kubeconfig, ...args])).stdout;

const condition = (): Promise<string> =>
  kubectl(
    ...['get', 'imagepolicy', 'web', '-n', ns, '-o'],
    "jsonpath={.status.conditions[?(@.type=='GMImageMissing')].status} {.status.conditions[?(@.type=='GMImageMissing')].reason}: {.status.conditions[?(@.type=='GMImageMissing')].message}",
  );

describe('GM images on the real registry', () => {
  before(async () => {
    [cp, registry] = await Promise.all([startKubeControlPlane(), startRegistry()]);
    await kubectl(
      ...['apply', '-f'],
      join(import.meta.dirname, '../../../deploy/kubernetes/operator-rbac.yaml'),
    );
    operator = await loadKubeConfig(cp.operator.kubeconfig);
  });
  after(async () => {
    await cp.stop();
    await registry.stop();
  });

  it('is present, then missing once its manifest is deleted, then unknown with the registry away', async () => {
    const client = createRegistryClient({ registry: registry.host, insecure: true });
    const digest = await pushImage(
      client,
      'acme/web',
      ['1.8.0-rev1-b1'],
      buildImage({ labels: { build: 'gm' } }),
    );
    await client.close();
    const repository = `${registry.host}/acme/web`;
    const spec = {
      repository,
      follow: 'rebuilds',
      workloads: [{ namespaces: ['shop'] }],
      gm: [{ digest, reason: 'GM of 1.8' }],
    };
    const file = join(await scratchDir('gm'), 'policy.yaml');
    await writeFile(
      file,
      stringify({
        apiVersion: 'molt.dev/v1alpha1',
        kind: 'ImagePolicy',
        metadata: { name: 'web', namespace: ns },
        spec,
      }),
    );
    await kubectl('apply', '-f', file);

    const c = { config: { registry: registry.host, insecure: true } } as unknown as LoadedConfig;
    let policies: readonly ImagePolicy[] = [];
    const watch = gmWatchOf(c, () => policies);
    const store = new MemoryOperatorStore();
    const lines: string[] = [];
    const log = (l: string): void => {
      lines.push(l);
    };
    const runner = declaredRunner({
      source: createKubeDeclared({ kc: operator, namespace: ns, now: () => Date.now() }),
      ...{ filePools: [], fileMachines: new Set<string>(), setPools: () => undefined, store, log },
      setImages: (p) => {
        policies = p;
      },
      gm: watch,
    });
    const sink = { store, log, now: () => Date.now() };
    let states: ReadonlyMap<string, GmState> = new Map();
    /** One leader pass: the check, then the declared runner writing the condition. */
    const pass = async (): Promise<void> => {
      states = await gmPass(watch, sink, states);
      await runner.refresh();
    };
    const samples = (): string[] =>
      imageFamilies(watch.findings() ?? []).filter((l) => !l.startsWith('#'));

    // The policy in force (a fresh API server may answer 429 for a moment: the runner retries).
    await eventually(
      async () => {
        await runner.refresh();
        assert.equal(policies.length, 1, lines.join('\n'));
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    await pass();
    assert.equal(await condition(), `False AllPresent: 1 GM digest present in ${repository}`);
    assert.deepEqual(samples(), [`molt_image_gm_missing{policy="web",digest="${digest}"} 0`]);

    const res = await fetch(`${registry.url}/v2/acme/web/manifests/${digest}`, {
      method: 'DELETE',
    });
    assert.equal(res.status, 202, await res.text());
    await pass();
    await pass();
    assert.equal(
      await condition(),
      `True DigestMissing: not in ${repository} any more: ${digest} (GM of 1.8)`,
    );
    assert.deepEqual(samples(), [`molt_image_gm_missing{policy="web",digest="${digest}"} 1`]);
    assert.match(
      await kubectl('get', 'imagepolicies', '-n', ns),
      /GM-MISSING[\s\S]*\bweb\b.*\bTrue\b/,
    );
    const warnings = (await store.history()).filter((e) => e.kind === 'warning');
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]?.message ?? '', /is missing from the registry/);

    await registry.stop();
    await pass();
    assert.match(await condition(), new RegExp(`^Unknown RegistryUnreachable: ${digest}: `));
    assert.deepEqual(samples(), []);
    assert.equal((await store.history()).filter((e) => e.kind === 'warning').length, 1);
  });
});
