// SPDX-License-Identifier: Apache-2.0
/**
 * Benchmark P9's arithmetic and table (bench/p9.ts measures): one upgrade's host-time boundaries
 * split into the five phases of issue 15, each agent phase inside them from the journal, and the
 * BENCH line. Every boundary is a host time (`Date.now()`), so the five phases add up to the total.
 */
import type { Arrived } from './p9-clock.ts';

/** Where one boot's time went, on its own (a reset of the idle machine). */
export interface Boot {
  /** The reset (or the kernel's "Restarting system"). */
  readonly start: number;
  /** OVMF's first line (`BdsDxe: loading …`). */
  readonly firmware: number;
  /** The kernel's start: the marker's time minus the uptime it prints. */
  readonly kernel: number;
  /** `MOLT-BOOTED` on the console: multi-user reached. */
  readonly booted: number;
  /** `molt agent: … listening on …` on the console. */
  readonly listening: number;
}

export interface Upgrade {
  /** Just before `POST /v1/upgrade`. */
  readonly request: number;
  readonly events: readonly Arrived[];
  /** Host times the event stream dropped (the first after the reboot was asked: the API closed). */
  readonly drops: readonly number[];
  /** The boot into the new slot; `start` is the kernel's "Restarting system". */
  readonly boot: Boot;
}

export interface P9Inputs {
  readonly upgrade: Upgrade;
  /** The same machine's boot on its own. */
  readonly baseline: Boot;
  /** The slot write at `dd` speed on the host (ms). */
  readonly writeMs: number;
  readonly notes: readonly string[];
}

const s = (ms: number): string => (ms / 1000).toFixed(1);

/** Host time − guest time over `events` (the live ones give the smallest difference). */
function offsetOf(events: readonly Arrived[]): number {
  return Math.min(...events.map((e) => e.at - e.time));
}

interface Split {
  readonly boot1: readonly Arrived[];
  readonly boot2: readonly Arrived[];
  readonly offset1: number;
  readonly offset2: number;
}

/** The events of the old boot and of the new one (from the `Rejoining` phase on). */
function split(events: readonly Arrived[]): Split {
  const i = events.findIndex((e) => e.event.kind === 'phase' && e.event.phase === 'Rejoining');
  if (i <= 0) throw new Error('the journal shows no reboot (no Rejoining phase)');
  const boot1 = events.slice(0, i);
  const boot2 = events.slice(i);
  return { boot1, boot2, offset1: offsetOf(boot1), offset2: offsetOf(boot2) };
}

/** Agent phases in `events` with their host start times, each lasting until the next one (or `end`). */
function phaseRows(events: readonly Arrived[], offset: number, end: number): string[] {
  const phases = events.filter((e) => e.event.kind === 'phase');
  return phases.map((p, i) => {
    const start = p.time + offset;
    const next = phases[i + 1];
    const until = next === undefined ? end : next.time + offset;
    return `    ${p.event.phase.padEnd(22)}${s(until - start).padStart(8)} s`;
  });
}

function bootNote(b: Boot): string {
  return `firmware ${s(b.firmware - b.start)} s, GRUB + kernel load ${s(b.kernel - b.firmware)} s, kernel + userspace ${s(b.booted - b.kernel)} s`;
}

export interface P9Result {
  readonly lines: readonly string[];
  readonly bench: string;
}

export function p9Report(i: P9Inputs): P9Result {
  const { upgrade: u, baseline: b } = i;
  const { boot1, boot2, offset1, offset2 } = split(u.events);
  const host = (e: Arrived, boot: 1 | 2): number => e.time + (boot === 1 ? offset1 : offset2);
  const rebooting = boot1.find((e) => e.event.kind === 'phase' && e.event.phase === 'Rebooting');
  const result = boot2.find((e) => e.event.kind === 'result');
  if (rebooting === undefined || result === undefined)
    throw new Error('the journal shows no Rebooting phase or no result');
  const t = {
    reboot: host(rebooting, 1),
    commit: host(result, 2),
  };
  const total = t.commit - u.request;
  const bootMs = b.booted - b.start;
  const overhead = total - bootMs - i.writeMs;
  const apiClosed = u.drops.find((d) => d >= t.reboot);
  const ownBoot = u.boot.booted - u.boot.start;
  const health = boot2.filter((e) => e.event.message.startsWith('health:'));
  const rows: [string, number, string][] = [
    ['pull + write (request → reboot asked)', t.reboot - u.request, ''],
    [
      'shutdown (reboot asked → "Restarting system")',
      u.boot.start - t.reboot,
      apiClosed === undefined ? '' : `the agent's API closed after ${s(apiClosed - t.reboot)} s`,
    ],
    ['boot (reset → MOLT-BOOTED)', u.boot.booted - u.boot.start, bootNote(u.boot)],
    ['agent start (MOLT-BOOTED → listening)', u.boot.listening - u.boot.booted, ''],
    ['health → commit (listening → result)', t.commit - u.boot.listening, ''],
  ];
  const lines = [
    ...i.notes,
    '',
    `${'phase'.padEnd(48)}${'s'.padStart(8)}`,
    ...rows.map(
      ([n, ms, note]) => `${n.padEnd(48)}${s(ms).padStart(8)}${note === '' ? '' : `   (${note})`}`,
    ),
    `${'total (request → committed)'.padEnd(48)}${s(total).padStart(8)}`,
    '',
    'agent phases, old boot (journal):',
    ...phaseRows(boot1, offset1, u.boot.start),
    'agent phases, new boot (journal; Rejoining starts before the API listens):',
    ...phaseRows(boot2, offset2, t.commit),
    `    health rounds logged: ${health.map((e) => `${s(host(e, 2) - u.boot.listening)} s after listening: ${e.event.message}`).join(' | ') || 'none'}`,
    '',
    `boot on its own (reset of the idle machine → MOLT-BOOTED): ${s(bootMs)} s (${bootNote(b)}); its agent start (→ listening): ${s(b.listening - b.booted)} s`,
    `slot write at dd speed (host, curl | tee >(sha256sum) | dd oflag=direct conv=fsync): ${s(i.writeMs)} s`,
    `guest clock − host clock: old boot ${String(-offset1)} ms, new boot ${String(-offset2)} ms (from the live events)`,
    `molt's overhead = total − boot − write = ${s(total)} − ${s(bootMs)} − ${s(i.writeMs)} = ${s(overhead)} s (target ≤ 5 s)`,
    `  with this upgrade's own boot instead (less exposed to the host's load): ${s(total)} − ${s(ownBoot)} − ${s(i.writeMs)} = ${s(total - ownBoot - i.writeMs)} s`,
  ];
  const bench = `BENCH P9 total_s=${s(total)} boot_s=${s(bootMs)} write_s=${s(i.writeMs)} overhead_s=${s(overhead)}`;
  return { lines, bench };
}
