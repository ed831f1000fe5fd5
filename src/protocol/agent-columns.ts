// SPDX-License-Identifier: Apache-2.0
/** Print columns of the agent's views (`molt node status`, `molt node operations`; later the dashboard). */
import type { AgentStatus, OperationSummaryView, SlotView } from './agent.ts';
import type { PrintColumn } from './releases.ts';

const shortDigest = (d: string | null): string =>
  d === null ? '-' : d.replace(/^sha256:/, '').slice(0, 12);

/** A slot with what the bootloader and the running system say about it. */
export interface SlotRow {
  readonly slot: SlotView;
  readonly boot: string;
  readonly booted: boolean;
}

/** The slot rows of a status, A then B. */
export function slotRows(status: AgentStatus): SlotRow[] {
  return status.slots.map((slot) => {
    const entry = status.boot.entries.find((e) => e.slot === slot.slot);
    const oneShot = status.boot.oneShot === slot.slot ? ' (next boot)' : '';
    const tries = entry?.triesLeft === undefined ? '' : ` tries-left=${String(entry.triesLeft)}`;
    return {
      slot,
      boot: entry === undefined ? '-' : `${entry.state}${tries}${oneShot}`,
      booted: status.bootedSlot === slot.slot,
    };
  });
}

/** Columns of the slot table under `molt node status`. */
export const slotColumns: readonly PrintColumn<SlotRow>[] = [
  { header: 'SLOT', value: (r) => (r.booted ? `${r.slot.slot}*` : r.slot.slot) },
  {
    header: 'STATUS',
    value: (r) => r.slot.status + (r.slot.badReason === undefined ? '' : ` (${r.slot.badReason})`),
  },
  { header: 'VERSION', value: (r) => r.slot.version ?? '-' },
  { header: 'DIGEST', value: (r) => shortDigest(r.slot.digest) },
  {
    header: 'GENERATION',
    value: (r) => (r.slot.generation === null ? '-' : String(r.slot.generation)),
  },
  { header: 'BOOT', value: (r) => r.boot },
];

/** Columns of `molt node operations`. */
export const operationColumns: readonly PrintColumn<OperationSummaryView>[] = [
  { header: 'OPERATION', value: (o) => o.operationId },
  { header: 'STARTED', value: (o) => o.firstTime },
  { header: 'LAST EVENT', value: (o) => o.lastTime },
  { header: 'EVENTS', value: (o) => String(o.events) },
  { header: 'RESULT', value: (o) => (o.result === undefined ? 'running' : o.result.result) },
  { header: 'REASON', value: (o) => o.result?.reason ?? '' },
];
