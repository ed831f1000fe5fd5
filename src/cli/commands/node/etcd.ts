// SPDX-License-Identifier: Apache-2.0
/**
 * `molt node etcd members|snapshot|forfeit-leadership|rejoin|remove-member`: a control-plane machine's
 * etcd member through its agent (docs/adr/0012 §6). All but `members` need an admin certificate.
 */
import { createWriteStream } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import { ErrorCode, MoltError } from '../../../protocol/index.ts';
import { looksLikeEtcdSnapshot, SnapshotHeaderBytes } from '../../../protocol/etcd-snapshot.ts';
import type { CommandContext } from '../../context.ts';
import { parseFlags } from '../../flags.ts';
import { renderData, renderTable } from '../../output.ts';
import { withRecovery } from './recovery-connection.ts';
import { memberColumns } from './recovery-render.ts';

/** `molt node etcd members`. */
export function runEtcdMembers(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  return withRecovery(ctx, raw, async ({ client, output }) => {
    const members = await client.kube.etcdMembers();
    ctx.io.out(
      output === 'table' ? renderTable(memberColumns, members) : renderData(output, members),
    );
  });
}

/**
 * `molt node etcd snapshot --output FILE`: written to `FILE.part` (mode 0600: the snapshot holds
 * the cluster's Secrets) and renamed once complete and shaped like a snapshot, so a broken
 * download never looks like one.
 */
export function runEtcdSnapshot(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  // `--output` is the file here (this command has no output format).
  const { output: file } = parseFlags(z.object({ output: z.string().min(1, 'is empty') }), {
    output: raw['output'],
  });
  return withRecovery(ctx, { ...raw, output: undefined }, async ({ client }) => {
    const part = `${file}.part`;
    try {
      const bytes = await client.bytes.etcdSnapshot();
      await pipeline(Readable.from(bytes), createWriteStream(part, { mode: 0o600 }));
      await checkDownloaded(part);
      await rename(part, file);
    } catch (e) {
      await rm(part, { force: true });
      throw e;
    }
    ctx.io.out(`wrote the etcd snapshot of ${client.baseUrl} to ${file}\n`);
  });
}

async function checkDownloaded(path: string): Promise<void> {
  const head = Buffer.alloc(SnapshotHeaderBytes);
  const f = await open(path, 'r');
  try {
    await f.read(head, 0, head.length, 0);
  } finally {
    await f.close();
  }
  if (!looksLikeEtcdSnapshot(head))
    throw new MoltError(
      ErrorCode.AgentProtocol,
      'the agent sent something that is not an etcd snapshot',
      {
        hint: 'is the endpoint a molt agent of this version?',
      },
    );
}

/** `molt node etcd forfeit-leadership [--to ID]`. */
export function runEtcdForfeit(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  const o = parseFlags(z.object({ to: z.string().min(1).max(32).optional() }), raw);
  return withRecovery(ctx, raw, async ({ client, output }) => {
    const answer = await client.kube.forfeitLeadership(o.to === undefined ? {} : { to: o.to });
    ctx.io.out(
      output !== 'table'
        ? renderData(output, answer)
        : answer.moved
          ? `leadership moved to member ${answer.leader}\n`
          : `this member does not lead; the leader is ${answer.leader === '0' ? 'unknown' : `member ${answer.leader}`}\n`,
    );
  });
}

/** `molt node etcd rejoin`: this machine's member back into the live cluster as a new one. */
export function runEtcdRejoin(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  return withRecovery(ctx, raw, async ({ client, output }) => {
    const members = await client.kube.rejoin();
    ctx.io.out(
      output === 'table'
        ? `rejoined\n${renderTable(memberColumns, members)}`
        : renderData(output, members),
    );
  });
}

/** `molt node etcd remove-member ID`. */
export function runEtcdRemove(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  const { id } = parseFlags(
    z.object({
      id: z.string().regex(/^[0-9a-f]{1,16}$/i, 'must be a hex member id (molt node etcd members)'),
    }),
    raw,
  );
  return withRecovery(ctx, raw, async ({ client, output }) => {
    const members = await client.kube.removeMember(id);
    ctx.io.out(
      output === 'table'
        ? `removed member ${id}\n${renderTable(memberColumns, members)}`
        : renderData(output, members),
    );
  });
}
