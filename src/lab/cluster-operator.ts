// SPDX-License-Identifier: Apache-2.0
/**
 * The lab's operator inside the lab's own cluster (`molt lab up --operator cluster`,
 * docs/adr/0018): installed the way a user installs it — the image `molt image build --operator`
 * makes, pushed to the lab's registry, and `kubectl apply -k` of an overlay of
 * `deploy/kubernetes` (its config and PKI as the ConfigMap and Secret the Deployment reads).
 * Its two replicas run on the VM nodes and drive every machine of the lab, the VMs they run on
 * included, keeping their state in OperatorRecords (`store: kubernetes`).
 *
 * VM nodes run no kube-proxy, so a pod cannot reach the `kubernetes` Service's ClusterIP: the
 * overlay sets `KUBERNETES_SERVICE_HOST`/`_PORT` to the API server's own address, as clusters
 * without kube-proxy do.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { parse, stringify } from 'yaml';
import { AppsV1Api, CoordinationV1Api } from '@kubernetes/client-node';
import { ErrorCode, MoltError } from '../core/errors.ts';
import { loadKubeConfig } from '../platform/kube/client.ts';
import { packageFile } from '../platform/package-files.ts';
import { eventually } from '../platform/process/managed-process.ts';
import type { FleetFileInput } from '../protocol/fleet-schema.ts';
import type { OperatorConfigInput } from '../protocol/operator-config.ts';
import { repository, type LabMachineRecord } from './fleet/fleet.ts';

const run = promisify(execFile);

/** The namespace and the Deployment's name in deploy/kubernetes. */
export const OperatorNamespace = 'molt-system';
export const OperatorName = 'molt-operator';
/** The ports the operator's container listens on (deploy/kubernetes/operator.yaml). */
export const OperatorPorts = { api: 7443, dashboard: 8443, probes: 8081 } as const;
/** Where the Deployment mounts the ConfigMap and the Secret. */
const ConfigDir = '/etc/molt/config';
const PkiDir = '/etc/molt/pki';
/** A cold build under a loaded machine took 2.5 min; the first pull of 61 MiB under TCG is slow too. */
const ImageBuildMs = 15 * 60_000;
const LeaderMs = 15 * 60_000;
/** The overlay's startupProbe period, set with the threshold so it owns the whole window. */
const StartupProbePeriodSeconds = 5;

export interface ClusterOperatorSetup {
  /** Where the overlay and its files go (`<lab>/operator`). */
  readonly dir: string;
  readonly molt: readonly string[];
  readonly kubectl: string;
  /** The lab admin's kubeconfig. */
  readonly kubeconfig: string;
  /** The lab registry, `host:port` as pods reach it (the bridge address). */
  readonly registry: string;
  /** The API server as pods reach it: `https://host:port`. */
  readonly apiServer: string;
  /** The operator's PKI files on the host (ca, cert, key, serverCert, serverKey). */
  readonly pki: Required<NonNullable<OperatorConfigInput['pki']>>;
  /** Every machine at the address a pod reaches it on. */
  readonly machines: readonly LabMachineRecord[];
  /** More of the operator config (periods, the dashboard's users). */
  readonly config: Partial<OperatorConfigInput>;
  /** Where the pods may run: the lab's machines play kubelets that run nothing, its VMs do. */
  readonly nodeSelector?: Readonly<Record<string, string>>;
  /** The container's CPU request instead of the manifest's (its share of a busy node's CPU). */
  readonly cpuRequest?: string;
  /** How long the container may take to answer its first probe, instead of the manifest's 5 min. */
  readonly startupSeconds?: number;
  readonly log: (line: string) => void;
  /** Aborted when the lab is told to stop while starting: the build, apply and wait end. */
  readonly signal?: AbortSignal | undefined;
}

/** What the overlay is written from. */
export type OverlaySetup = Pick<
  ClusterOperatorSetup,
  | 'dir'
  | 'registry'
  | 'apiServer'
  | 'pki'
  | 'machines'
  | 'config'
  | 'nodeSelector'
  | 'cpuRequest'
  | 'startupSeconds'
>;

/** `molt image build --operator --push`; resolves with the pushed reference by digest. */
async function pushImage(s: ClusterOperatorSetup): Promise<string> {
  const ref = `${s.registry}/molt/operator:lab`;
  const [command = process.execPath, ...prefix] = s.molt;
  const t = performance.now();
  const out = await run(
    command,
    [...prefix, 'image', 'build', '--operator', '--push', ref, '--insecure', '--json'],
    { maxBuffer: 16 * 2 ** 20, timeout: ImageBuildMs, signal: s.signal },
  ).catch((e: unknown) => {
    const stderr = (e as { stderr?: string }).stderr ?? String(e);
    throw new MoltError(ErrorCode.LabFailed, `molt image build --operator failed:\n${stderr}`, {
      cause: e,
    });
  });
  const summary = JSON.parse(out.stdout) as { digest: string };
  s.log(
    `operator: image ${ref} (${summary.digest.slice(0, 19)}…) built and pushed in ${String(Math.round((performance.now() - t) / 1000))} s`,
  );
  return `${s.registry}/molt/operator@${summary.digest}`;
}

/** The operator config as the pod reads it: paths where the Deployment mounts them. */
function podConfig(s: OverlaySetup): OperatorConfigInput {
  const listen = (port: number) => ({ host: '0.0.0.0', port });
  return {
    registry: s.registry,
    repository,
    insecure: true,
    fleet: `${ConfigDir}/fleet.yaml`,
    pki: {
      ca: `${PkiDir}/ca.pem`,
      cert: `${PkiDir}/operator.pem`,
      key: `${PkiDir}/operator.key`,
      serverCert: `${PkiDir}/server.pem`,
      serverKey: `${PkiDir}/server.key`,
    },
    store: 'kubernetes',
    interval: '1s',
    discoverEvery: '2s',
    ...s.config,
    listen: listen(OperatorPorts.api),
    health: { listen: listen(OperatorPorts.probes) },
    ...(s.config.dashboard !== undefined && {
      dashboard: { ...s.config.dashboard, listen: listen(OperatorPorts.dashboard) },
    }),
    kubernetes: { namespace: OperatorNamespace, leaderElection: true, declared: true },
  };
}

/**
 * The overlay `kubectl apply -k s.dir` takes: deploy/kubernetes with `image` (by digest), the
 * config and fleet as its ConfigMap and the PKI as its Secret.
 */
export async function writeOperatorOverlay(s: OverlaySetup, image: string): Promise<void> {
  await mkdir(join(s.dir, 'pki'), { recursive: true, mode: 0o700 });
  const pkiFiles = {
    'ca.pem': s.pki.ca,
    'operator.pem': s.pki.cert,
    'operator.key': s.pki.key,
    'server.pem': s.pki.serverCert,
    'server.key': s.pki.serverKey,
  };
  for (const [name, from] of Object.entries(pkiFiles))
    await copyFile(from ?? '', join(s.dir, 'pki', name));
  // Pools are molt.dev Pool objects the lab applies (declared): the file lists machines only.
  const fleet: FleetFileInput = {
    fleet: { policies: [{ controlPlaneFirst: true }] },
    pools: [],
    machines: s.machines.map((m) => ({ ...m, labels: { ...m.labels } })),
  };
  await writeFile(join(s.dir, 'fleet.yaml'), stringify(fleet));
  await writeFile(join(s.dir, 'operator.yaml'), stringify(podConfig(s)));
  const api = new URL(s.apiServer);
  const [name, digest] = image.split('@');
  const base = packageFile('deploy', 'kubernetes');
  // The base's `images:` already renamed the Deployment's image: the overlay renames that name.
  const baseImage = (
    parse(await readFile(join(base, 'kustomization.yaml'), 'utf8')) as {
      images: { newName: string }[];
    }
  ).images[0]?.newName;
  const generated = { namespace: OperatorNamespace, behavior: 'replace' as const };
  const container = '/spec/template/spec/containers/0';
  const kustomization = {
    apiVersion: 'kustomize.config.k8s.io/v1beta1',
    kind: 'Kustomization',
    resources: [relative(s.dir, base)],
    images: [{ name: baseImage, newName: name, digest }],
    generatorOptions: { disableNameSuffixHash: true },
    configMapGenerator: [
      { name: `${OperatorName}-config`, ...generated, files: ['operator.yaml', 'fleet.yaml'] },
    ],
    secretGenerator: [
      {
        name: `${OperatorName}-pki`,
        namespace: OperatorNamespace,
        files: Object.keys(pkiFiles).map((f) => `${f}=pki/${f}`),
      },
    ],
    patches: [
      {
        target: { kind: 'Deployment', name: OperatorName },
        patch: stringify([
          {
            op: 'add',
            path: `${container}/env/-`,
            value: { name: 'KUBERNETES_SERVICE_HOST', value: api.hostname },
          },
          {
            op: 'add',
            path: `${container}/env/-`,
            value: { name: 'KUBERNETES_SERVICE_PORT', value: api.port || '443' },
          },
          ...(s.nodeSelector === undefined
            ? []
            : [{ op: 'add', path: '/spec/template/spec/nodeSelector', value: s.nodeSelector }]),
          ...(s.cpuRequest === undefined
            ? []
            : [
                { op: 'replace', path: `${container}/resources/requests/cpu`, value: s.cpuRequest },
              ]),
          ...(s.startupSeconds === undefined
            ? []
            : [
                {
                  op: 'replace',
                  path: `${container}/startupProbe/periodSeconds`,
                  value: StartupProbePeriodSeconds,
                },
                {
                  op: 'replace',
                  path: `${container}/startupProbe/failureThreshold`,
                  value: Math.ceil(s.startupSeconds / StartupProbePeriodSeconds),
                },
              ]),
        ]),
      },
    ],
  };
  await writeFile(join(s.dir, 'kustomization.yaml'), stringify(kustomization));
}

/** The Lease's holder once every replica is Ready and one of them holds the Lease and renews it. */
async function leader(kubeconfig: string, signal: AbortSignal | undefined): Promise<string> {
  const kc = await loadKubeConfig(kubeconfig);
  const leases = kc.makeApiClient(CoordinationV1Api);
  const apps = kc.makeApiClient(AppsV1Api);
  const where = { namespace: OperatorNamespace, name: OperatorName };
  return eventually(
    async () => {
      const d = await apps.readNamespacedDeployment(where);
      const ready = d.status?.readyReplicas ?? 0;
      const wanted = d.spec?.replicas ?? 1;
      if (ready < wanted)
        throw new Error(`${String(ready)} of ${String(wanted)} operator replicas Ready`);
      const lease = await leases.readNamespacedLease(where);
      const holder = lease.spec?.holderIdentity ?? '';
      // The client hands MicroTime back as a Date or as text, depending on the path.
      const renewed = new Date(lease.spec?.renewTime ?? 0).getTime();
      if (holder === '' || Date.now() - renewed > 60_000)
        throw new Error(`the Lease ${OperatorNamespace}/${OperatorName} has no live holder`);
      return holder;
    },
    { timeoutMs: LeaderMs, intervalMs: 3_000, signal },
  );
}

/** Build, push and apply the operator; resolves once its replicas are Ready and one leads. */
export async function installClusterOperator(s: ClusterOperatorSetup): Promise<void> {
  const image = await pushImage(s);
  await writeOperatorOverlay(s, image);
  await run(s.kubectl, ['--kubeconfig', s.kubeconfig, 'apply', '-k', s.dir], {
    maxBuffer: 16 * 2 ** 20,
    signal: s.signal,
  }).catch((e: unknown) => {
    const stderr = (e as { stderr?: string }).stderr ?? String(e);
    throw new MoltError(ErrorCode.LabFailed, `kubectl apply -k ${s.dir} failed:\n${stderr}`, {
      cause: e,
    });
  });
  s.log(`operator: applied (kubectl apply -k ${s.dir}); waiting for a replica to lead`);
  const t = performance.now();
  const holder = await leader(s.kubeconfig, s.signal).catch((e: unknown) => {
    throw new MoltError(ErrorCode.LabFailed, `no operator pod took the Lease: ${String(e)}`, {
      hint: `kubectl -n ${OperatorNamespace} describe pods; kubectl -n ${OperatorNamespace} logs deploy/${OperatorName}`,
      cause: e,
    });
  });
  s.log(
    `operator: ${holder} leads, in the cluster (${String(Math.round((performance.now() - t) / 1000))} s after apply)`,
  );
}
