// SPDX-License-Identifier: Apache-2.0
import { z } from 'zod';
import {
  parseChannel,
  parseKubernetesVersion,
  parseVersion,
  selectLatest,
} from '../../../core/releases/index.ts';
import { rejectionColumns, toReleaseView, type LatestView } from '../../../protocol/index.ts';
import { ExitCode } from '../../io.ts';
import type { CommandContext } from '../../context.ts';
import { renderData, renderTable } from '../../output.ts';
import { parseFlags } from '../../flags.ts';
import { runDiscovery } from './discover.ts';

const latestSchema = z.object({
  channel: z.string().min(1),
  current: z.string().min(1).optional(),
  kubernetes: z.string().min(1).optional(),
});

/** `molt releases latest`: the release to run next, why newer ones were rejected, and the path. */
export async function runLatest(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  const o = parseFlags(latestSchema, raw);
  // Refuse bad input before the first network request.
  const channel = parseChannel(o.channel);
  if (o.current !== undefined) parseVersion(o.current, 'current version');
  if (o.kubernetes !== undefined) parseKubernetesVersion(o.kubernetes);
  const run = await runDiscovery(ctx, raw);
  const selection = selectLatest({
    releases: run.result.releases,
    channel,
    requireSignature: run.requireSignature,
    ...(o.current !== undefined && { current: o.current }),
    ...(o.kubernetes !== undefined && { kubernetes: o.kubernetes }),
  });
  const view: LatestView = {
    found: selection.found,
    channel,
    current: o.current ?? null,
    ...(selection.found && toReleaseView(selection.release)),
    ...(!selection.found && { reason: selection.reason }),
    path: selection.found ? selection.path.map((r) => r.version) : [],
    rejected: selection.rejected.map((r) => ({
      version: r.version,
      tag: r.tag,
      digest: r.digest,
      code: r.code,
      reason: r.reason,
    })),
  };
  ctx.io.out(
    run.flags.output === 'table' ? describeLatest(view) : renderData(run.flags.output, view),
  );
  if (!view.found) ctx.setExitCode(ExitCode.NoEligibleRelease);
}

function describeLatest(v: LatestView): string {
  const from = v.current === null ? '' : ` from ${v.current}`;
  const head = v.found
    ? `latest in ${v.channel}${from}: ${v.version ?? ''} (${v.tag ?? ''}, ${v.digest ?? ''})\n` +
      (v.path.length > 1 ? `upgrade path: ${v.path.join(' → ')}\n` : '')
    : `no eligible release in channel ${v.channel}${from}: ${v.reason ?? ''}\n`;
  const rejected =
    v.rejected.length > 0 ? `\nnot chosen:\n${renderTable(rejectionColumns, v.rejected)}` : '';
  return head + rejected;
}
