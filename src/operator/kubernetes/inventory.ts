// SPDX-License-Identifier: Apache-2.0
/**
 * A cluster's control plane as the Kubernetes plan sees it (docs/adr/0012 §4): its control-plane
 * machines (the store's, by `cluster`, `default` when unnamed), what each runs (its agent's
 * `GET /v1/kubernetes`), which one's etcd member leads, and whether etcd is healthy — every member
 * a voter, one leader that every machine agrees on.
 */
import { ErrorCode, errorLine, MoltError } from '../../core/errors.ts';
import {
  KubeComponents,
  type ControlPlaneMachine,
  type KubeComponent,
} from '../../core/kubernetes/types.ts';
import type { EtcdMemberView } from '../../protocol/agent-kubernetes.ts';
import type { MachineRecord } from '../ports/store.ts';
import type { KubePlanDeps } from './deps.ts';

export interface ClusterInventory {
  readonly records: readonly MachineRecord[];
  readonly machines: readonly ControlPlaneMachine[];
  readonly leader?: string;
  readonly etcd: { readonly healthy: boolean; readonly message: string };
}

const isComponent = (name: string): name is KubeComponent =>
  (KubeComponents as readonly string[]).includes(name);

/** The control-plane machines of `cluster` in the store, by id. */
export async function controlPlaneRecords(
  d: Pick<KubePlanDeps, 'store'>,
  cluster: string,
): Promise<MachineRecord[]> {
  return (await d.store.read()).machines.filter(
    (m) => m.role === 'control-plane' && (m.cluster ?? 'default') === cluster,
  );
}

async function runningOf(d: KubePlanDeps, m: MachineRecord): Promise<ControlPlaneMachine> {
  const view = await d.agents.controlPlane(m);
  return {
    id: m.id,
    components: view.components
      .filter((c) => isComponent(c.name))
      .map((c) => ({
        name: c.name,
        healthy: c.healthy,
        ...(c.version !== undefined && { version: c.version }),
        ...(c.bundle !== undefined && { bundle: c.bundle }),
        ...(c.emulatedVersion !== undefined && { emulatedVersion: c.emulatedVersion }),
      })),
  };
}

const hostOf = (url: string): string | undefined => {
  try {
    return new URL(url).hostname;
  } catch {
    return undefined;
  }
};

/**
 * The machine whose member leads: the member's name is the machine's id (as molt names members),
 * else the one machine whose agent's host serves the member's client URL.
 */
function leaderMachine(
  records: readonly MachineRecord[],
  members: readonly EtcdMemberView[],
  leader: string,
): string | undefined {
  if (records.some((r) => r.id === leader)) return leader;
  const hosts = new Set(
    members.filter((m) => m.name === leader).flatMap((m) => m.clientUrls.map(hostOf)),
  );
  const found = records.filter((r) => hosts.has(hostOf(r.endpoint)));
  return found.length === 1 ? found[0]?.id : undefined;
}

function etcdVerdict(
  records: readonly MachineRecord[],
  views: readonly (EtcdMemberView[] | string)[],
): { healthy: boolean; message: string; leader?: string } {
  const failed = views
    .map((v, i) => (typeof v === 'string' ? `${records[i]?.id ?? '?'}: ${v}` : undefined))
    .filter((x) => x !== undefined);
  if (failed.length > 0)
    return { healthy: false, message: `members unreachable: ${failed.join('; ')}` };
  const leaders = new Set(
    views.flatMap((v) =>
      typeof v === 'string' ? [] : v.filter((m) => m.isLeader).map((m) => m.name),
    ),
  );
  const first = views[0];
  const members = typeof first === 'string' || first === undefined ? [] : first;
  if (leaders.size !== 1)
    return {
      healthy: false,
      message: `the members do not agree on one leader (${[...leaders].join(', ') || 'none'})`,
    };
  const learners = members.filter((m) => m.isLearner).map((m) => m.name);
  if (learners.length > 0)
    return { healthy: false, message: `learners not promoted yet: ${learners.join(', ')}` };
  const leader = [...leaders][0] ?? '';
  const machine = leaderMachine(records, members, leader);
  return {
    healthy: true,
    message: `${String(members.length)} voting members, leader ${leader}`,
    ...(machine !== undefined && { leader: machine }),
  };
}

/** Ask every control-plane machine of `cluster`; `MOLT_AGENT_UNREACHABLE` when one does not answer. */
export async function clusterInventory(
  d: KubePlanDeps,
  cluster: string,
): Promise<ClusterInventory> {
  const records = await controlPlaneRecords(d, cluster);
  if (records.length === 0)
    throw new MoltError(
      ErrorCode.UnknownMachine,
      `cluster ${cluster} has no control-plane machine`,
      {
        hint: 'machines of the cluster need role control-plane and cluster set in the fleet file',
      },
    );
  const machines = await Promise.all(records.map((m) => runningOf(d, m)));
  const views = await Promise.all(
    records.map((m) => d.agents.etcdMembers(m).catch((e: unknown) => errorLine(e))),
  );
  const etcd = etcdVerdict(records, views);
  return { records, machines, etcd, ...(etcd.leader !== undefined && { leader: etcd.leader }) };
}
