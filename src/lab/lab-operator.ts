// SPDX-License-Identifier: Apache-2.0
/**
 * The lab's operator (docs/adr/0007): its pools and policies, its config, and its process.
 *
 * - `control-plane` follows `stable`, one machine at a time;
 * - `workers` follows `beta`: a canary, then a third of the pool at a time, halting at the first
 *   failure;
 * - `vms` (with `--vms N`) follows `vm`: a canary, then two VMs at a time, halting at the first
 *   failure. A real upgrade of a VM under TCG takes about two minutes, so the canary's soak is
 *   short next to it;
 * - `vm-control-plane` (with `--vm-control-planes M`) follows `vm` one machine at a time, in the
 *   fleet file's cluster `lab-vms`, which accepts the downtime of fewer than three control planes.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { writePrivateFile } from '../platform/fs/private-file.ts';
import { issueLabAdminCert, issueOperatorApiCert } from './fleet/operator-pki.ts';
import { newToken, sha256Hex } from '../platform/pki/tokens.ts';
import { startProcess, type ManagedProcess } from '../platform/process/managed-process.ts';
import { waitReady } from '../platform/process/readiness.ts';
import type { FleetFileInput } from '../protocol/fleet-schema.ts';
import type { OperatorConfigInput } from '../protocol/operator-config.ts';
import { MoltGroup, MoltVersion } from '../protocol/kube-resources.ts';
import { OperatorDashboardPrefix, OperatorServingPrefix } from '../protocol/operator.ts';
import type { LabFleet, LabMachineRecord } from './fleet/fleet.ts';
import { writeOperatorFiles } from './fleet/operator-files.ts';
import { VmClusterName } from './vm/vm-cluster.ts';
import { VmChannel, VmControlPlanePool, VmPool } from './vm/vm-machines.ts';

export interface LabOperatorSetup {
  readonly fast: boolean;
  readonly workers: number;
  readonly vms: number;
  /** Control-plane VMs of a cluster on VMs (`--vm-control-planes`). @default 0 */
  readonly vmControlPlanes?: number;
  /** The operator's kubeconfig when the lab runs Kubernetes. */
  readonly kubeconfig?: string | undefined;
  readonly ports: { readonly api: number; readonly dashboard: number };
}

/** The lab's pools: those that have machines. */
export function labPools(o: LabOperatorSetup): FleetFileInput['pools'] {
  return [
    {
      name: 'control-plane',
      channel: 'stable',
      policies: [{ concurrency: 1 }, { machineSoak: o.fast ? '1s' : '10s' }],
    },
    ...(o.workers === 0
      ? []
      : [
          {
            name: 'workers',
            channel: 'beta',
            policies: [
              { canary: { count: 1, soak: o.fast ? '2s' : '20s' } },
              { concurrency: '33%' },
              { failureBudget: 1 },
            ],
          },
        ]),
    ...((o.vmControlPlanes ?? 0) === 0
      ? []
      : [{ name: VmControlPlanePool, channel: VmChannel, policies: [{ concurrency: 1 }] }]),
    ...(o.vms === 0
      ? []
      : [
          {
            name: VmPool,
            channel: VmChannel,
            policies: [
              { canary: { count: 1, soak: o.fast ? '2s' : '10s' } },
              { concurrency: 2 },
              { failureBudget: 1 },
            ],
          },
        ]),
  ];
}

/** The lab's dashboard user: `lab`, an admin, whose token is in this file (0600). */
export const labDashboardUser = { name: 'lab', role: 'admin' } as const;

/** What {@link writeOperatorConfig} wrote. */
export interface LabOperatorFiles {
  /** The operator config's path. */
  readonly config: string;
  /**
   * With Kubernetes, the lab's pools as molt.dev `Pool` objects to `kubectl apply` (docs/adr/0011):
   * the fleet file then lists machines only, and people change pools with kubectl.
   */
  readonly pools?: string;
  /** The file holding the dashboard token of {@link labDashboardUser}. */
  readonly dashboardToken: string;
  /** What the config adds to writeOperatorFiles' defaults: its PKI, listeners, periods. */
  readonly settings: Partial<OperatorConfigInput>;
}

/**
 * A new token for the lab's dashboard user, written to `<dir>/dashboard.token` (0600); the config
 * gets its hash. Reads stay open to anyone (`anonymousRead`: `molt lab status` and the demo read
 * the page's JSON, on loopback); acting needs the sign-in.
 */
async function dashboardAccess(dir: string) {
  const file = join(dir, 'dashboard.token');
  const token = newToken();
  await writePrivateFile(file, `${token}\n`);
  const user = { ...labDashboardUser, tokenSha256: sha256Hex(token) };
  return { file, config: { anonymousRead: true, users: [user] } };
}

/** Write the operator's files for `fleet` plus `vms`. */
export async function writeOperatorConfig(
  o: LabOperatorSetup,
  fleet: LabFleet,
  vms: readonly LabMachineRecord[],
): Promise<LabOperatorFiles> {
  const pki = fleet.pki.dir;
  const access = await dashboardAccess(fleet.dir);
  await issueLabAdminCert(pki);
  const declared = o.kubeconfig !== undefined;
  const pools = declared ? await writePoolObjects(fleet.dir, labPools(o)) : undefined;
  const settings: Partial<OperatorConfigInput> = {
    pki: await issueOperatorApiCert(pki),
    id: 'lab-operator',
    discoverEvery: '2s',
    listen: { host: '127.0.0.1', port: o.ports.api },
    dashboard: { listen: { host: '127.0.0.1', port: o.ports.dashboard }, ...access.config },
    ...(o.kubeconfig !== undefined && { kubernetes: { kubeconfig: o.kubeconfig } }),
    // Beside QEMU machines under TCG the host's etcd and this process can go seconds without a
    // core: the default 10 s claim lapsed a dozen times in a run and each lapse cost passes. The
    // lab has one operator, so a longer claim costs no standby anything.
    ...(o.vms > 0 && { leaderTtl: '30s' }),
  };
  const controlPlanes = o.vmControlPlanes ?? 0;
  const config = await writeOperatorFiles(
    { ...fleet, machines: [...fleet.machines, ...vms] },
    {
      pools: declared ? [] : labPools(o),
      config: settings,
      ...(controlPlanes > 0 && {
        clusters: [
          {
            name: VmClusterName,
            ...(controlPlanes < 3 && { smallControlPlane: 'accept-downtime' as const }),
          },
        ],
      }),
    },
  );
  return { config, dashboardToken: access.file, settings, ...(pools !== undefined && { pools }) };
}

/** The pools as `Pool` objects in the operator's namespace, in `<dir>/pools.yaml`. */
async function writePoolObjects(dir: string, pools: FleetFileInput['pools']): Promise<string> {
  const file = join(dir, 'pools.yaml');
  const docs = pools.map(({ name, ...spec }) =>
    stringify({
      apiVersion: `${MoltGroup}/${MoltVersion}`,
      kind: 'Pool',
      metadata: { name, namespace: 'molt-system' },
      spec,
    }),
  );
  await writeFile(file, docs.join('---\n'));
  return file;
}

export async function startOperator(
  molt: readonly string[],
  config: string,
  logs: string,
): Promise<{ process: ManagedProcess; api: string; dashboard: string }> {
  const [command = process.execPath, ...prefix] = molt;
  const operator = startProcess(
    'molt operator',
    command,
    [...prefix, 'operator', '--config', config],
    {
      logFile: join(logs, 'operator.log'),
    },
  );
  // Each line is waited for while the operator makes progress (a busy machine), not past its exit.
  const line = (pattern: RegExp): Promise<string> =>
    waitReady({
      what: 'the operator',
      processes: [operator],
      probe: () => {
        const m = pattern.exec(operator.output());
        if (m === null) return Promise.reject(new Error(`no ${String(pattern)} in its output yet`));
        return Promise.resolve(m[1] ?? '');
      },
    });
  try {
    const api = await line(new RegExp(`${OperatorServingPrefix}(\\S+)`));
    const dashboard = await line(new RegExp(`${OperatorDashboardPrefix}(\\S+)`));
    await line(/leading as/);
    return { process: operator, api, dashboard };
  } catch (e) {
    // Not yet among what the lab stops on failure: stopped here, so it never outlives the lab.
    await operator.stop();
    throw e;
  }
}
