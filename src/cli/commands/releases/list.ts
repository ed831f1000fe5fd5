// SPDX-License-Identifier: Apache-2.0
import { sortReleases } from '../../../core/releases/index.ts';
import { releaseColumns, toReleaseView } from '../../../protocol/index.ts';
import type { CommandContext } from '../../context.ts';
import { renderData, renderTable } from '../../output.ts';
import { runDiscovery } from './discover.ts';

/** `molt releases list`: every release (official only unless --all), newest first. */
export async function runList(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  const { flags, channel, result } = await runDiscovery(ctx, raw);
  const all = raw['all'] === true;
  const shown = sortReleases(result.releases)
    .filter((r) => all || r.official)
    .filter((r) => channel === undefined || r.channels.includes(channel))
    .map(toReleaseView);
  if (flags.output === 'table') {
    ctx.io.out(shown.length > 0 ? renderTable(releaseColumns, shown) : 'no releases found\n');
  } else {
    ctx.io.out(renderData(flags.output, shown));
  }
}
