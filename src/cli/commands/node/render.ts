// SPDX-License-Identifier: Apache-2.0
/** How `molt node` prints status and events for people; machines get `-o json|yaml`. */
import { shownAt } from '../../../protocol/operator-columns.ts';
import { stringify } from 'yaml';
import {
  holdActive,
  slotColumns,
  slotRows,
  type AgentEvent,
  type AgentStatus,
  type HoldView,
} from '../../../protocol/index.ts';
import type { CliIo } from '../../io.ts';
import { renderTable, type OutputFormat } from '../../output.ts';

/**
 * A machine's hold as a line: who, why, until when (and whether that has passed); `undefined` is an
 * agent older than holds.
 */
export function holdLine(hold: HoldView | null | undefined, now: number): string {
  if (hold === undefined) return 'unknown (this agent keeps no holds)';
  if (hold === null) return 'none';
  const by =
    hold.onBehalfOf === undefined ? hold.setBy.name : `${hold.onBehalfOf} (via ${hold.setBy.name})`;
  const until = `${holdActive(hold, now) ? 'until' : 'ended'} ${shownAt(hold.until, now)}`;
  return `${until} by ${by}: ${hold.reason}`;
}

/** `molt node status` as a person reads it: the machine, its hold, then its slots. */
export function describeStatus(s: AgentStatus, now: number = Date.now()): string {
  const op =
    s.operation === null
      ? 'none'
      : `${s.operation.kind} ${s.operation.id} (${s.operation.phase}) since ${shownAt(s.operation.startedAt, now)}`;
  const last =
    s.last === null
      ? 'none'
      : `${s.last.kind} ${s.last.operationId}: ${s.last.result}${s.last.code === undefined ? '' : ` ${s.last.code}`}` +
        `${s.last.reason === undefined ? '' : ` (${s.last.reason})`} at ${shownAt(s.last.finishedAt, now)}`;
  const lines = [
    `node:       ${s.node} (${s.role})`,
    `version:    ${s.version ?? 'unknown'} on slot ${s.bootedSlot}`,
    `boot id:    ${s.bootId}`,
    `bootloader: ${s.boot.bootloader}, committed ${s.boot.committed ?? 'none'}${s.boot.oneShot === null ? '' : `, next boot ${s.boot.oneShot}`}`,
    `phase:      ${s.phase}`,
    `operation:  ${op}`,
    `last:       ${last}`,
    `hold:       ${holdLine(s.hold, now)}`,
  ];
  return `${lines.join('\n')}\n\n${renderTable(slotColumns, slotRows(s))}`;
}

const mib = (n: number): string => `${(n / 1_048_576).toFixed(1)} MiB`;
const clock = (iso: string): string => iso.slice(11, 19) || iso;

/**
 * One event as a line (no progress events). The agent's failed step carries its error, whose
 * message the step's own message already holds, and the result repeats it as its reason: each is
 * said once — the error's code where its message was already `said` (lines printed before).
 */
export function eventLine(e: AgentEvent, said: readonly string[] = []): string {
  const code = e.error === undefined ? '' : ` ${e.error.code}`;
  if (e.kind === 'result') {
    const r = e.result;
    const reason = r?.reason;
    const why = reason === undefined || said.some((l) => l.includes(reason)) ? '' : `: ${reason}`;
    return `${clock(e.time)}  result: ${r?.result ?? 'unknown'}${code} (operation ${e.operationId})${why}\n`;
  }
  const error =
    e.error === undefined
      ? ''
      : e.message.includes(e.error.message)
        ? ` [${e.error.code}]`
        : ` [${e.error.code}: ${e.error.message}]`;
  return `${clock(e.time)}  ${e.phase.padEnd(22)} ${e.status.padEnd(8)} ${e.message}${error}\n`;
}

/** Prints a followed stream: lines, a live byte bar for progress on a terminal, NDJSON / YAML for machines. */
export interface EventPrinter {
  print(e: AgentEvent): void;
  /** Finish a pending progress bar line. */
  end(): void;
}

/** A printer for `format` on `io`. */
export function createEventPrinter(io: CliIo, format: OutputFormat): EventPrinter {
  if (format !== 'table') {
    const render =
      format === 'json'
        ? (e: AgentEvent) => JSON.stringify(e) + '\n'
        : (e: AgentEvent) => `---\n${stringify(e)}`;
    return {
      print: (e) => {
        io.out(render(e));
      },
      end: () => undefined,
    };
  }
  let barOpen = false;
  let lastStep = -1;
  /** The lines of each operation so far, so its result does not repeat their reason. */
  const said = new Map<string, string[]>();
  const closeBar = (): void => {
    if (barOpen) io.out('\n');
    barOpen = false;
  };
  return {
    print(e) {
      if (e.kind !== 'progress' || e.progress === undefined) {
        closeBar();
        lastStep = -1;
        const before = said.get(e.operationId) ?? [];
        const line = eventLine(e, before);
        io.out(line);
        if (e.kind === 'result') said.delete(e.operationId);
        else said.set(e.operationId, [...before, line]);
        return;
      }
      const { bytes, total } = e.progress;
      const fraction = total > 0 ? Math.min(1, bytes / total) : 0;
      if (io.isTty) {
        const filled = Math.round(fraction * 30);
        io.out(
          `\r${e.phase.padEnd(12)} [${'#'.repeat(filled)}${'-'.repeat(30 - filled)}] ${String(Math.floor(fraction * 100)).padStart(3)}%  ${mib(bytes)} / ${mib(total)}`,
        );
        barOpen = true;
        return;
      }
      // Without a terminal, one plain line per tenth is enough for a log file.
      const step = Math.floor(fraction * 10);
      if (step === lastStep) return;
      lastStep = step;
      io.out(
        `${clock(e.time)}  ${e.phase.padEnd(22)} ${String(step * 10).padStart(3)}%     ${mib(bytes)} / ${mib(total)}\n`,
      );
    },
    end: closeBar,
  };
}
