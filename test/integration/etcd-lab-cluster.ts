// SPDX-License-Identifier: Apache-2.0
/**
 * A real etcd cluster run the way a lab control plane runs it: one lab etcd service (PID file,
 * detached process) and one etcd member adapter per machine root.
 */
import { join } from 'node:path';
import { createEtcdMember } from '../../src/agent/adapters/etcd/etcd-member.ts';
import { createEtcdService } from '../../src/agent/adapters/etcd-service/index.ts';
import type { EtcdMember } from '../../src/agent/ports/etcd-member.ts';
import type { Services } from '../../src/agent/ports/services.ts';
import { freePort } from '../../src/platform/process/free-port.ts';
import { eventually, tempDir } from '../../src/platform/process/managed-process.ts';

export interface LabMachine {
  readonly name: string;
  readonly root: string;
  readonly dataDir: string;
  readonly clientUrl: string;
  readonly service: Services;
  readonly member: EtcdMember;
}

export interface LabCluster {
  readonly machines: readonly LabMachine[];
  readonly endpoints: readonly string[];
  stop(): Promise<void>;
}

const url = (port: number): string => `http://127.0.0.1:${port}`;

export async function startLabCluster(count = 3): Promise<LabCluster> {
  const dir = await tempDir('etcd-lab');
  const specs = [];
  for (let i = 0; i < count; i++) {
    const root = join(dir.path, `cp-${i}`);
    specs.push({
      name: `cp-${i}`,
      root,
      dataDir: join(root, 'ephemeral', 'etcd'),
      peerUrl: url(await freePort()),
      clientUrl: url(await freePort()),
    });
  }
  const initialCluster = specs.map((s) => `${s.name}=${s.peerUrl}`).join(',');
  const endpoints = specs.map((s) => s.clientUrl);
  const machines = specs.map((s) => {
    const service = createEtcdService({
      ...s,
      initialCluster,
      clusterToken: dir.path,
      heartbeatMs: 50,
      electionTimeoutMs: 500,
    });
    const member = createEtcdMember({ ...s, endpoints, service, rejoinTimeoutMs: 20_000 });
    return { ...s, service, member };
  });
  const stop = async (): Promise<void> => {
    // One at a time: a leader stopped together with its peers stalls until SIGKILL.
    for (const m of machines) await m.service.stopAll();
    await dir.remove();
  };
  try {
    await Promise.all(machines.map((m) => m.service.startAll()));
    await eventually(
      async () => {
        for (const m of machines) {
          const h = await m.member.healthy();
          if (!h.healthy) throw new Error(`${h.name}: ${h.message ?? ''}`);
        }
      },
      { timeoutMs: 20_000, intervalMs: 200 },
    );
  } catch (e) {
    await stop();
    throw e;
  }
  return { machines, endpoints, stop };
}
