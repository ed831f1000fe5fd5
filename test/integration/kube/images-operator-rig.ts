// SPDX-License-Identifier: Apache-2.0
/**
 * The image operator rig (benchmark P12, `images-operator.test.ts`): a real control plane (no kubelet: only spec changes are watched, on Deployments of 0
 * replicas), the real registry behind a counting proxy (`registry-counting-proxy.ts`), `repositories`
 * repositories `bench/app-NN` with the 3-tier tags `1.0.0`, `1.0.0-rev1`, `1.0.0-rev1-b1`,
 * `perRepository` Deployments each (spread over a few namespaces, labelled `app=app-NN`) running
 * `<repo>:1.0.0-rev1@<digest>`, and the real `molt operator` process under the shipped RBAC
 * (`deploy/kubernetes/operator-rbac.yaml`) with a fleet file that only follows images: one policy
 * per repository, `follow: rebuilds`, default settings.
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AppsV1Api, CoreV1Api, type V1Deployment } from '@kubernetes/client-node';
import { Agent, fetch } from 'undici';
import { stringify } from 'yaml';
import {
  startKubeControlPlane,
  type KubeControlPlane,
} from '../../../src/lab/services/kube-control-plane.ts';
import { pushInstallerImage } from '../../../src/lab/services/installer-image.ts';
import { startRegistry, type RunningRegistry } from '../../../src/lab/services/registry.ts';
import {
  buildImage,
  createRegistryClient,
  pushImage,
  type BuiltImage,
} from '../../../src/oci/index.ts';
import { mapConcurrent } from '../../../src/releases/discovery/pool.ts';
import { loadKubeConfig } from '../../../src/platform/kube/client.ts';
import { initCaDir, issueToDir } from '../../../src/platform/pki/store.ts';
import {
  startProcess,
  tempDir,
  type ManagedProcess,
} from '../../../src/platform/process/managed-process.ts';
import { OperatorDashboardPrefix, OperatorServingPrefix } from '../../../src/protocol/operator.ts';
import { sha256Hex } from '../../../src/platform/pki/tokens.ts';
import { ImagesView } from '../../../src/protocol/operator-images.ts';
import { moltEntry } from '../../../src/testkit/molt-entry.ts';
import { startCountingProxy, type CountingProxy } from './registry-counting-proxy.ts';

const exec = promisify(execFile);
/** The operator's release repository: one release in it, so machine discovery has nothing to say. */
const installer = 'bench/installer';
const rbac = join(import.meta.dirname, '../../../deploy/kubernetes/operator-rbac.yaml');

export const repositoryName = (r: number): string => `bench/app-${String(r).padStart(2, '0')}`;
const appOf = (r: number): string => `app-${String(r).padStart(2, '0')}`;
/** The rebuild pushed to repository `r`: `b` 1 is what every workload runs at the start. */
export const rebuildOf = (r: number, b: number): BuiltImage =>
  buildImage({ labels: { app: appOf(r), build: String(b) } });

export interface P12Options {
  readonly repositories: number;
  readonly perRepository: number;
  readonly namespaces: number;
  /** Added to every image policy (a canary, policies, …). */
  readonly policy?: Readonly<Record<string, unknown>>;
  /** Serve the dashboard too, with this operator-role user's token. */
  readonly dashboardToken?: string;
  /** Read molt.dev objects (`ImagePolicy`) in molt-system too (`kubernetes.declared`). */
  readonly declared?: boolean;
}

export interface P12Rig {
  readonly cp: KubeControlPlane;
  readonly registry: RunningRegistry;
  /** The registry as the operator and the workloads reach it (`host` is what references name). */
  readonly proxy: CountingProxy;
  readonly operator: ManagedProcess;
  /** `127.0.0.1:<proxy>/bench/app-NN`. */
  repository(r: number): string;
  /** The digest of build 1 in each repository. */
  readonly digests: readonly string[];
  /** The Deployments of repository `r` (label `app=app-NN`), every namespace. */
  deployments(r: number): Promise<V1Deployment[]>;
  /** Every Deployment of the bench. */
  allDeployments(): Promise<V1Deployment[]>;
  /** `GET /v1/images` on the operator's API (mTLS), parsed. */
  images(): Promise<ImagesView>;
  /** The operator API's `https://127.0.0.1:port`, and the PKI (CA, `operator.pem`/`.key`). */
  readonly api: string;
  readonly pkiDir: string;
  /** The dashboard's `http://127.0.0.1:port/` when asked for (`dashboardToken`). */
  readonly dashboard: string | undefined;
  /** `GET <path>` on the operator's API (mTLS): the JSON answered, or a throw naming the status. */
  get(path: string): Promise<unknown>;
  stop(): Promise<void>;
}

/** Start everything; `phase` is told when each part is done (for the table). */
export async function startP12Rig(o: P12Options): Promise<P12Rig> {
  const scratch = await tempDir('bench-p12');
  const [cp, registry] = await Promise.all([startKubeControlPlane(), startRegistry()]);
  const proxy = await startCountingProxy(registry.host);
  let operator: ManagedProcess | undefined;
  let api: Agent | undefined;
  const stop = async (): Promise<void> => {
    await api?.close();
    await operator?.stop(10_000);
    await proxy.close();
    await Promise.all([cp.stop(), registry.stop()]);
    await scratch.remove();
  };
  try {
    await exec(join(cp.bins, 'kubectl'), [
      '--kubeconfig',
      cp.admin.kubeconfig,
      'apply',
      '-f',
      rbac,
    ]);
    const admin = await loadKubeConfig(cp.admin.kubeconfig);
    const apps = admin.makeApiClient(AppsV1Api);
    const repository = (r: number): string => `${proxy.host}/${repositoryName(r)}`;
    const client = createRegistryClient({ registry: registry.host, insecure: true });
    const repos = Array.from({ length: o.repositories }, (_, r) => r);
    await pushInstallerImage(client, installer, '1.0.0');
    const digests = await mapConcurrent(repos, 4, (r) =>
      pushImage(
        client,
        repositoryName(r),
        ['1.0.0', '1.0.0-rev1', '1.0.0-rev1-b1'],
        rebuildOf(r, 1),
      ),
    ).finally(() => client.close());
    const core = admin.makeApiClient(CoreV1Api);
    const namespaces = Array.from({ length: o.namespaces }, (_, n) => `bench-${String(n)}`);
    for (const name of namespaces) await core.createNamespace({ body: { metadata: { name } } });
    const units = repos.flatMap((r) =>
      Array.from({ length: o.perRepository }, (_, k) => ({ r, k })),
    );
    await mapConcurrent(units, 8, ({ r, k }) =>
      apps.createNamespacedDeployment({
        namespace: namespaces[k % namespaces.length] ?? 'default',
        body: deployment(
          `${appOf(r)}-${String(k)}`,
          appOf(r),
          `${repository(r)}:1.0.0-rev1@${digests[r] ?? ''}`,
        ),
      }),
    );
    const config = await writeFiles(scratch.path, cp, registry.host, {
      images: repos.map((r) => ({
        name: appOf(r),
        repository: repository(r),
        follow: 'rebuilds',
        workloads: [{ namespaces, matchLabels: { app: appOf(r) } }],
        ...o.policy,
      })),
      dashboardToken: o.dashboardToken,
      declared: o.declared === true,
    });
    operator = startProcess('molt operator', process.execPath, [
      moltEntry,
      'operator',
      '--config',
      config,
    ]);
    const url = (
      (await operator.waitFor(new RegExp(`${OperatorServingPrefix}(\\S+)`), 120_000))[1] ?? ''
    ).replace(/\/$/, '');
    const dashboard =
      o.dashboardToken === undefined
        ? undefined
        : (await operator.waitFor(new RegExp(`${OperatorDashboardPrefix}(\\S+)`), 60_000))[1];
    const pki = (f: string): Promise<string> => readFile(join(scratch.path, 'pki', f), 'utf8');
    api = new Agent({
      connect: {
        ca: await pki('ca.pem'),
        cert: await pki('operator.pem'),
        key: await pki('operator.key'),
      },
      headersTimeout: 120_000,
      bodyTimeout: 120_000,
    });
    const dispatcher = api;
    const get = async (path: string): Promise<unknown> => {
      const res = await fetch(`${url}${path}`, { dispatcher });
      if (res.status !== 200)
        throw new Error(`GET ${path}: ${String(res.status)} ${await res.text()}`);
      return res.json();
    };
    return {
      ...{ cp, registry, proxy, operator, repository, digests, stop, dashboard },
      ...{ api: url, pkiDir: join(scratch.path, 'pki') },
      deployments: async (r) =>
        (await apps.listDeploymentForAllNamespaces({ labelSelector: `app=${appOf(r)}` })).items,
      allDeployments: async () => (await apps.listDeploymentForAllNamespaces()).items,
      images: async () => ImagesView.parse(await get('/v1/images')),
      get,
    };
  } catch (e) {
    if (operator !== undefined) process.stderr.write(operator.output().slice(-3000));
    await stop();
    throw e;
  }
}

/**
 * One Deployment of `app` (one container `app`) with 0 replicas: there is no kubelet here, and a
 * workload that is not available is down for reasons of its own, which the planner never starts
 * (`core/rollout/types.ts` `available`). With 0 replicas it is available once its controller has
 * observed the spec, so a unit the driver changes also finishes, and the driver's pace shows.
 */
function deployment(name: string, app: string, image: string): V1Deployment {
  return {
    metadata: { name, labels: { app } },
    spec: {
      replicas: 0,
      selector: { matchLabels: { app, unit: name } },
      template: {
        metadata: { labels: { app, unit: name } },
        spec: { containers: [{ name: 'app', image }] },
      },
    },
  };
}

/** The PKI, the fleet file (no machine, no pool: images only) and the operator config. */
async function writeFiles(
  dir: string,
  cp: KubeControlPlane,
  registry: string,
  o: {
    readonly images: readonly object[];
    readonly dashboardToken: string | undefined;
    readonly declared: boolean;
  },
): Promise<string> {
  const { images, dashboardToken } = o;
  const pkiDir = join(dir, 'pki');
  await initCaDir(pkiDir);
  for (const [role, name] of [
    ['operator', 'operator'],
    ['node', 'operator-api'],
  ] as const)
    await issueToDir({ caDir: pkiDir, outDir: pkiDir, role, name, sans: [], days: 1 });
  await writeFile(join(dir, 'fleet.yaml'), stringify({ pools: [], machines: [], images }));
  const config = {
    registry,
    repository: installer,
    insecure: true,
    fleet: 'fleet.yaml',
    pki: {
      ...{ ca: 'pki/ca.pem', cert: 'pki/operator.pem', key: 'pki/operator.key' },
      ...{ serverCert: 'pki/operator-api.pem', serverKey: 'pki/operator-api.key' },
    },
    store: 'memory',
    id: 'bench-p12',
    listen: { host: '127.0.0.1', port: 0 },
    ...(dashboardToken !== undefined && {
      dashboard: {
        listen: { host: '127.0.0.1', port: 0 },
        users: [{ name: 'alice', role: 'operator', tokenSha256: sha256Hex(dashboardToken) }],
      },
    }),
    kubernetes: { kubeconfig: cp.operator.kubeconfig, ...(o.declared && { declared: true }) },
  };
  const path = join(dir, 'operator.yaml');
  await writeFile(path, stringify(config));
  return path;
}
