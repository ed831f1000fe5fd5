// SPDX-License-Identifier: Apache-2.0
/** Reading the operator's history whole, page by page (`molt history`, `molt rollout status`). */
import type { HistoryEventView, OperatorClient } from '../../../protocol/index.ts';

/** Events asked for per request. */
const pageSize = 1000;

/** Every stored event of the rollout (all when undefined), oldest first. */
export async function readAll(
  client: OperatorClient,
  rollout: string | undefined,
): Promise<HistoryEventView[]> {
  const events: HistoryEventView[] = [];
  for (;;) {
    const page = await client.history({
      after: events.at(-1)?.seq ?? 0,
      limit: pageSize,
      ...(rollout !== undefined && { rollout }),
    });
    events.push(...page);
    if (page.length < pageSize) return events;
  }
}
