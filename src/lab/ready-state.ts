// SPDX-License-Identifier: Apache-2.0
/** What `lab.json` says about a lab once it is ready (state.ts), from the parts `startLab` made. */
import { join } from 'node:path';
import { repository, type LabFleet } from './fleet/fleet.ts';
import type { LabNetwork } from './fleet/network.ts';
import { labDashboardUser } from './lab-operator.ts';
import type { LabKube } from './lab-kube.ts';
import type { LabState } from './state.ts';
import type { VmMachines } from './vm/vm-machines.ts';

function networkState(network: LabNetwork): LabState['network'] {
  const r = network.record();
  return r === undefined
    ? { mode: network.mode }
    : { mode: network.mode, bridge: r.bridge, subnet: r.subnet, namespaces: [...r.namespaces] };
}

/** What lab.json says about the lab once it is ready. */
export function readyState(
  o: { readonly dir: string },
  parts: {
    network: LabNetwork;
    kube: LabKube | undefined;
    fleet: LabFleet;
    vms: VmMachines | undefined;
    operator: { api: string; dashboard: string; dashboardToken: string };
  },
): LabState {
  const { network, kube, fleet, vms, operator } = parts;
  return {
    pid: process.pid,
    state: 'ready',
    startedAt: new Date().toISOString(),
    dir: o.dir,
    registry: fleet.registry.host,
    repository,
    operator: {
      api: operator.api,
      dashboard: operator.dashboard,
      dashboardUser: labDashboardUser.name,
      dashboardToken: operator.dashboardToken,
    },
    pki: fleet.pki.dir,
    network: networkState(network),
    ...(kube !== undefined && {
      kubeconfig: kube.admin.kubeconfig,
      kubectl: join(kube.bins, 'kubectl'),
      ...(kube.controlPlaneImage !== undefined && { controlPlaneImage: kube.controlPlaneImage }),
    }),
    machines: [...fleet.machines, ...(vms?.machines ?? [])].map((m) => ({
      id: m.id,
      role: m.role,
      pool: m.pool,
      endpoint: m.endpoint,
    })),
    ...(vms !== undefined && { vms: vms.vms.map((v) => v.record) }),
  };
}
