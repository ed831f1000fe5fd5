// SPDX-License-Identifier: Apache-2.0
// What images-rollout.test.ts drives with (docs/adr/0013 decision 9): the shared workload
// cluster, a real etcd operator store per scenario, the image driver's real deps (the Workloads
// adapter as molt-operator, `repositoryScanner` over the Debian registry), and the reads the
// assertions make: a workload's pod template, its pods' images, its generation.
import assert from 'node:assert/strict';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { LabReadyLabel } from '../../../src/agent/adapters/lab/image-readiness.ts';
import type { ImagePolicy } from '../../../src/core/images/types.ts';
import type { Rollout } from '../../../src/core/rollout/types.ts';
import { startEtcd, type EtcdCluster } from '../../../src/lab/services/etcd.ts';
import { buildImage, createRegistryClient, pushImage, type Built } from '../../../src/oci/index.ts';
import { attachLegacySignature, signLegacy } from '../../../src/releases/index.ts';
import { createEtcdOperatorStore } from '../../../src/operator/adapters/etcd-store/operator-store.ts';
import { createKubeWorkloads } from '../../../src/operator/adapters/kube-workloads/index.ts';
import { repositoryScanner } from '../../../src/operator/compose-images.ts';
import type { LoadedConfig } from '../../../src/operator/config.ts';
import { imagePass, type ImageDriverDeps } from '../../../src/operator/images/drive.ts';
import type { OperatorStore } from '../../../src/operator/ports/store.ts';
import type { WorkloadRef } from '../../../src/operator/ports/workloads.ts';
import { eventually } from '../../../src/platform/process/managed-process.ts';
import { createWorkload, startWorkloadCluster, type WorkloadCluster } from './workload-cluster.ts';

export interface Rig {
  readonly c: WorkloadCluster;
  readonly etcd: EtcdCluster;
  /** `host:port/<path>` in the test registry. */
  repo(path: string): string;
  /** Push `built` (or an image with `labels`; `ready: false` labels it not ready) under `tags`. */
  push(
    path: string,
    tags: readonly string[],
    built: Built | Record<string, string>,
  ): Promise<string>;
  /** Create a workload on `image` and wait until it is available. */
  create(ref: WorkloadRef, image: string, spec?: Record<string, unknown>): Promise<void>;
  /**
   * The driver over `policies` (a function: what a person edits between passes), a fresh etcd
   * store under its own prefix, logging to `log`; signatures checked with `publicKeyPem`.
   */
  driver(
    policies: readonly ImagePolicy[] | (() => readonly ImagePolicy[]),
    o?: { readonly publicKeyPem?: string },
  ): Driver;
  /** Sign `digest` of `path` as cosign does (a legacy `.sig` tag) with `privateKeyPem`. */
  sign(path: string, digest: string, privateKeyPem: string): Promise<void>;
  /** Delete a manifest through the registry API (its tags go with it). */
  deleteManifest(path: string, digest: string): Promise<void>;
  /** The pod template's images by container (init ones too). */
  template(ref: WorkloadRef): Promise<Record<string, string>>;
  /** `metadata.generation`: 1 for a workload nobody changed since it was created. */
  generation(ref: WorkloadRef): Promise<number>;
  /** The images of the running pods of `ref` (label `app=<name>`), deduplicated. */
  podImages(ref: WorkloadRef): Promise<string[]>;
  stop(): Promise<void>;
}

export interface Driver {
  readonly deps: ImageDriverDeps;
  readonly store: OperatorStore;
  readonly log: string[];
  pass(): Promise<void>;
  /** Run passes every 500 ms until `check` holds; answers what it returned. */
  until<T>(check: () => Promise<T>, timeoutMs?: number): Promise<T>;
  rollouts(): Promise<readonly Rollout[]>;
}

const config = (publicKeyPem: string | undefined) =>
  ({
    config: { registry: 'registry.example.com', insecure: false },
    ...(publicKeyPem !== undefined && { publicKeyPem }),
  }) as unknown as LoadedConfig;

const isBuilt = (b: Built | Record<string, string>): b is Built =>
  typeof b.kind === 'string' && 'manifest' in b;

export async function startRig(): Promise<Rig> {
  const [c, etcd] = await Promise.all([startWorkloadCluster(), startEtcd()]);
  const apps = c.admin.makeApiClient(AppsV1Api);
  const core = c.admin.makeApiClient(CoreV1Api);
  const workloads = createKubeWorkloads({ kc: c.operator });
  const stores: OperatorStore[] = [];
  const read = (ref: WorkloadRef) => {
    const q = { name: ref.name, namespace: ref.namespace };
    if (ref.kind === 'Deployment') return apps.readNamespacedDeployment(q);
    if (ref.kind === 'DaemonSet') return apps.readNamespacedDaemonSet(q);
    return apps.readNamespacedStatefulSet(q);
  };
  let prefixes = 0;
  const client = () => createRegistryClient({ registry: c.registry.host, insecure: true });
  return {
    c,
    etcd,
    repo: (path) => `${c.registry.host}/${path}`,
    async push(path, tags, built) {
      const writer = client();
      try {
        const b = isBuilt(built)
          ? built
          : buildImage({
              labels: {
                ...built,
                path,
                ...(built['ready'] === 'false' && { [LabReadyLabel]: 'false' }),
              },
            });
        return await pushImage(writer, path, tags, b);
      } finally {
        await writer.close();
      }
    },
    async sign(path, digest, privateKeyPem) {
      const writer = client();
      try {
        const reference = `${c.registry.host}/${path}`;
        const signature = signLegacy({ privateKeyPem, digest, reference });
        await attachLegacySignature({ client: writer, repository: path, digest, signature });
      } finally {
        await writer.close();
      }
    },
    async deleteManifest(path, digest) {
      const res = await fetch(`${c.registry.url}/v2/${path}/manifests/${digest}`, {
        method: 'DELETE',
      });
      assert.equal(res.status, 202, await res.text());
    },
    async create(ref, image, spec = {}) {
      await createWorkload(c.admin, ref, image, { spec });
      await eventually(
        async () => {
          assert.equal((await workloads.progress(ref)).state, 'available');
        },
        { timeoutMs: 60_000, intervalMs: 250 },
      );
    },
    driver(policies, o = {}) {
      const store = createEtcdOperatorStore({
        endpoints: etcd.endpoints,
        prefix: `/images-${String(++prefixes)}/`,
      });
      stores.push(store);
      const log: string[] = [];
      const deps: ImageDriverDeps = {
        policies: typeof policies === 'function' ? policies : () => policies,
        workloads,
        scan: repositoryScanner(config(o.publicKeyPem)),
        now: () => Date.now(),
        store,
        log: (l) => log.push(l),
      };
      const pass = () => imagePass(deps);
      return {
        deps,
        store,
        log,
        pass,
        until: (check, timeoutMs = 60_000) =>
          eventually(
            async () => {
              await pass();
              return await check();
            },
            { timeoutMs, intervalMs: 500 },
          ),
        rollouts: async () => (await store.read()).rollouts,
      };
    },
    async template(ref) {
      const spec = (await read(ref)).spec?.template.spec;
      return Object.fromEntries(
        [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])].map((x) => [
          x.name,
          x.image ?? '',
        ]),
      );
    },
    generation: async (ref) => (await read(ref)).metadata?.generation ?? 0,
    async podImages(ref) {
      const pods = await core.listNamespacedPod({
        namespace: ref.namespace,
        labelSelector: `app=${ref.name}`,
      });
      const images = pods.items
        .filter((p) => p.metadata?.deletionTimestamp === undefined)
        .flatMap((p) => p.spec?.containers.map((x) => x.image ?? '') ?? []);
      return [...new Set(images)].sort();
    },
    async stop() {
      for (const s of stores) await s.close();
      await c.stop();
      await etcd.stop();
    },
  };
}
