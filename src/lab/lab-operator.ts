// SPDX-License-Identifier: Apache-2.0
/**
 * The lab's operator (docs/adr/0007): its pools and policies, its config, and its process.
 *
 * - `control-plane` follows `stable`, one machine at a time;
 * - `workers` follows `beta`: a canary, then a third of the pool at a time, halting at the first
 *   failure;
 * - `vms` (with `--vms N`) follows `vm`: a canary, then two VMs at a time, halting at the first
 *   failure. A real upgrade of a VM under TCG takes about two minutes, so the canary's soak is
 *   short next to it.
 */
import { join } from 'node:path';
import { issueToDir } from '../platform/pki/store.ts';
import { startProcess, type ManagedProcess } from '../platform/process/managed-process.ts';
import type { FleetFileInput } from '../protocol/fleet-schema.ts';
import { OperatorDashboardPrefix, OperatorServingPrefix } from '../protocol/operator.ts';
import type { LabFleet, LabMachineRecord } from './fleet/fleet.ts';
import { writeOperatorFiles } from './fleet/operator-files.ts';
import { VmChannel, VmPool } from './vm/vm-machines.ts';

export interface LabOperatorSetup {
  readonly fast: boolean;
  readonly workers: number;
  readonly vms: number;
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

/** Write the operator's files for `fleet` plus `vms`; resolves with the config's path. */
export async function writeOperatorConfig(
  o: LabOperatorSetup,
  fleet: LabFleet,
  vms: readonly LabMachineRecord[],
): Promise<string> {
  const pki = fleet.pki.dir;
  await issueToDir({
    caDir: pki,
    outDir: pki,
    role: 'node',
    name: 'operator-api',
    sans: [],
    days: 30,
  });
  return writeOperatorFiles(
    { ...fleet, machines: [...fleet.machines, ...vms] },
    {
      pools: labPools(o),
      config: {
        pki: {
          ca: join(pki, 'ca.pem'),
          cert: join(pki, 'operator.pem'),
          key: join(pki, 'operator.key'),
          serverCert: join(pki, 'operator-api.pem'),
          serverKey: join(pki, 'operator-api.key'),
        },
        id: 'lab-operator',
        discoverEvery: '2s',
        listen: { host: '127.0.0.1', port: o.ports.api },
        dashboard: { listen: { host: '127.0.0.1', port: o.ports.dashboard } },
        ...(o.kubeconfig !== undefined && { kubernetes: { kubeconfig: o.kubeconfig } }),
      },
    },
  );
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
  const api =
    (await operator.waitFor(new RegExp(`${OperatorServingPrefix}(\\S+)`), 60_000))[1] ?? '';
  const dashboard =
    (await operator.waitFor(new RegExp(`${OperatorDashboardPrefix}(\\S+)`), 60_000))[1] ?? '';
  await operator.waitFor(/leading as/, 60_000);
  return { process: operator, api, dashboard };
}
