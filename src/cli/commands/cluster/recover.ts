// SPDX-License-Identifier: Apache-2.0
/**
 * `molt cluster recover --etcd-snapshot FILE --machine A --machine B …` (docs/adr/0012 §6): bring
 * a cluster back from a snapshot through the agents alone, Kubernetes down. Checked first, nothing
 * changed: the file is a snapshot, every machine's agent answers and runs an etcd member. Then:
 * stop the Kubernetes components and etcd on every machine but the first (so no old member keeps
 * serving the old data beside the restored one), restore the snapshot on the first as a new
 * one-member cluster, and rejoin the others one at a time as new members, each waited a healthy
 * voter. The restore and the rejoins start each machine's components again.
 */
import { createReadStream } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { ErrorCode, MoltError } from '../../../protocol/index.ts';
import type { ServiceView } from '../../../protocol/agent-kubernetes.ts';
import type { CommandContext } from '../../context.ts';
import { parseFlags } from '../../flags.ts';
import { connectRecovery, type RecoveryConnection } from '../node/recovery-connection.ts';
import { membersLine } from '../node/recovery-render.ts';
import { checkSnapshotFile, type SnapshotFacts } from './snapshot-file.ts';

const schema = z.object({
  etcdSnapshot: z.string({ message: 'is required: the snapshot file' }).min(1, 'is empty'),
  machine: z
    .array(z.string().min(1))
    .min(1, 'is required: the control-plane machines, the one to restore first')
    .refine((m) => new Set(m).size === m.length, 'names a machine twice'),
  rejoinTimeout: z.coerce.number().int().min(1_000).max(3_600_000).default(300_000),
});

interface Machine {
  readonly spec: string;
  readonly conn: RecoveryConnection;
  readonly services: readonly ServiceView[];
}

/** A machine is a name (found through the operator) or its agent's https:// URL. */
const flagsFor = (spec: string, raw: Record<string, unknown>): Record<string, unknown> =>
  /^https?:\/\//.test(spec)
    ? { ...raw, endpoint: spec, machine: undefined, output: undefined }
    : { ...raw, machine: spec, endpoint: undefined, output: undefined };

export async function runRecover(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  const o = parseFlags(schema, raw);
  const say = (line: string): void => {
    ctx.io.out(`${line}\n`);
  };
  const facts = await checkSnapshotFile(o.etcdSnapshot, ctx.io.env);
  say(`snapshot ${o.etcdSnapshot}: ${describe(facts)}`);
  const machines: Machine[] = [];
  try {
    for (const spec of o.machine) machines.push(await reach(ctx, spec, raw));
    const [first, ...others] = machines;
    if (first === undefined) return;
    for (const m of others) await stopMember(m, say);
    say(`${first.spec}: restoring the snapshot as a new one-member cluster…`);
    const restored = await first.conn.client.bytes.etcdRestore(createReadStream(o.etcdSnapshot));
    say(`${first.spec}: restored; ${membersLine(restored)}`);
    for (const m of others) {
      say(`${m.spec}: rejoining as a new member…`);
      await m.conn.client.kube.rejoin();
      const members = await waitVoter(m, o.rejoinTimeout);
      say(`${m.spec}: a healthy voter; ${membersLine(members)}`);
    }
    say(`recovered: ${membersLine(await first.conn.client.kube.etcdMembers())}`);
  } finally {
    await Promise.all(machines.map((m) => m.conn.close()));
  }
}

function describe(f: SnapshotFacts): string {
  const size = `${String(f.bytes)} bytes`;
  return f.status === undefined
    ? `${size}, an etcd snapshot by its header (${f.headerOnly ?? 'etcdutl did not run'})`
    : `${size}, revision ${String(f.status.revision)}, ${String(f.status.keys)} keys`;
}

/** Connect and look: the agent answers and the machine runs an etcd member. Changes nothing. */
async function reach(
  ctx: CommandContext,
  spec: string,
  raw: Record<string, unknown>,
): Promise<Machine> {
  const conn = await connectRecovery(ctx, flagsFor(spec, raw));
  try {
    const services = await conn.client.kube.services();
    if (!services.some((s) => s.name === 'etcd'))
      throw new MoltError(ErrorCode.NotControlPlane, `${spec} runs no etcd member`, {
        hint: 'name the cluster’s control-plane machines; nothing was changed',
      });
    return { spec, conn, services };
  } catch (e) {
    await conn.close();
    throw e;
  }
}

/** Stop the machine's Kubernetes components, then etcd: its old member must not serve beside the restored one. */
async function stopMember(m: Machine, say: (line: string) => void): Promise<void> {
  const order = [...m.services]
    .reverse()
    .filter((s) => s.name === 'etcd' || s.name.startsWith('kube-'));
  for (const s of order) {
    await m.conn.client.kube.stopService(s.name);
    say(`${m.spec}: stopped ${s.name}`);
  }
}

/** Until the machine's own member is a started voter (its agent's rejoin waited it caught up). */
async function waitVoter(m: Machine, timeoutMs: number) {
  const until = performance.now() + timeoutMs;
  for (;;) {
    const members = await m.conn.client.kube.etcdMembers().catch(() => []);
    const self = members.find((x) => x.self === true);
    if (self !== undefined && !self.isLearner && self.name !== '') return members;
    if (performance.now() >= until)
      throw new MoltError(
        ErrorCode.EtcdUnhealthy,
        `${m.spec} did not become a voting member in time`,
        {
          hint: `see molt node logs --service etcd on ${m.spec}; then molt node etcd rejoin on it (the others are recovered)`,
          retryable: true,
        },
      );
    await sleep(500);
  }
}
