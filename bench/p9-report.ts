// SPDX-License-Identifier: Apache-2.0
/**
 * Benchmark P9's arithmetic and table (bench/p9.ts measures): one upgrade's host-time boundaries
 * split into the five phases of docs/real-machines.md §6, each agent phase inside them from the journal, and the
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
  /** A reboot of the idle machine through its agent: the boot on its own, nothing written. */
  readonly reboot: Upgrade;
  /** The slot write at `dd` speed on the host (ms). */
  readonly writeMs: number;
  readonly notes: readonly string[];
}

const s = (ms: number): string => (ms / 1000).toFixed(1);

/** Host time − guest time over `events` (the live ones give the smallest difference). */
function offsetOf(events: readonly Arrived[]): number {
  return Math.min(...events.map((e) => e.at - e.time));
}

/** One operation through a reboot: its events per boot, brought to host time, and its phases. */
interface Observed {
  readonly boot1: readonly Arrived[];
  readonly boot2: readonly Arrived[];
  readonly offset1: number;
  readonly offset2: number;
  /** The `Rebooting` phase and the result, in host time. */
  readonly reboot: number;
  readonly commit: number;
  readonly apiClosed: number | undefined;
  /** The five phases (ms), which add up to the total. */
  readonly phases: readonly number[];
  readonly total: number;
}

function observed(u: Upgrade): Observed {
  const i = u.events.findIndex((e) => e.event.kind === 'phase' && e.event.phase === 'Rejoining');
  if (i <= 0) throw new Error('the journal shows no reboot (no Rejoining phase)');
  const boot1 = u.events.slice(0, i);
  const boot2 = u.events.slice(i);
  const offset1 = offsetOf(boot1);
  const offset2 = offsetOf(boot2);
  const rebooting = boot1.find((e) => e.event.kind === 'phase' && e.event.phase === 'Rebooting');
  const result = boot2.find((e) => e.event.kind === 'result');
  if (rebooting === undefined || result === undefined)
    throw new Error('the journal shows no Rebooting phase or no result');
  const reboot = rebooting.time + offset1;
  const commit = result.time + offset2;
  const b = u.boot;
  return {
    boot1,
    boot2,
    offset1,
    offset2,
    reboot,
    commit,
    apiClosed: u.drops.find((d) => d >= reboot),
    phases: [
      reboot - u.request,
      b.start - reboot,
      b.booted - b.start,
      b.listening - b.booted,
      commit - b.listening,
    ],
    total: commit - u.request,
  };
}

const PhaseNames = [
  'pull + write (request → reboot asked)',
  'shutdown (reboot asked → "Restarting system")',
  'boot (→ MOLT-BOOTED: multi-user reached)',
  'agent start (MOLT-BOOTED → API listening)',
  'health → commit (listening → result)',
] as const;

/** Agent phases in `events` with their durations, each lasting until the next one (or `end`). */
function phaseRows(events: readonly Arrived[], offset: number, end: number): string[] {
  const phases = events.filter((e) => e.event.kind === 'phase');
  return phases.map((p, i) => {
    const next = phases[i + 1];
    const until = next === undefined ? end : next.time + offset;
    return `    ${p.event.phase.padEnd(22)}${s(until - p.time - offset).padStart(8)} s`;
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
  const u = observed(i.upgrade);
  const r = observed(i.reboot);
  const up = i.upgrade.boot;
  const bootMs = i.reboot.boot.booted - i.reboot.boot.start;
  const overhead = u.total - bootMs - i.writeMs;
  const health = u.boot2.filter((e) => e.event.message.startsWith('health:'));
  const row = (name: string, a: number, b: number): string =>
    `${name.padEnd(48)}${s(a).padStart(10)}${s(b).padStart(12)}`;
  const lines = [
    ...i.notes,
    '',
    `${'phase (s)'.padEnd(48)}${'upgrade'.padStart(10)}${'reboot only'.padStart(12)}`,
    ...PhaseNames.map((n, k) => row(n, u.phases[k] ?? NaN, r.phases[k] ?? NaN)),
    row('total (request → result)', u.total, r.total),
    '',
    `upgrade boot: ${bootNote(up)}; reboot-only boot: ${bootNote(i.reboot.boot)}`,
    `the agent's API closed ${u.apiClosed === undefined ? '(not seen)' : `${s(u.apiClosed - u.reboot)} s`} after the reboot was asked`,
    'agent phases of the upgrade, old boot (journal):',
    ...phaseRows(u.boot1, u.offset1, up.start),
    'agent phases of the upgrade, new boot (journal; Rejoining starts before the API listens):',
    ...phaseRows(u.boot2, u.offset2, u.commit),
    `    health rounds logged: ${health.map((e) => `${s(e.time + u.offset2 - up.listening)} s after listening: ${e.event.message}`).join(' | ') || 'none'}`,
    '',
    `boot on its own (the reboot-only operation, "Restarting system" → MOLT-BOOTED): ${s(bootMs)} s`,
    `slot write at dd speed (host, curl | tee >(sha256sum) | dd oflag=direct conv=fsync): ${s(i.writeMs)} s`,
    `guest clock − host clock: ${[u.offset1, u.offset2, r.offset1, r.offset2].map((o) => `${String(-o)} ms`).join(', ')} (per boot, from the live events)`,
    `molt's overhead = total − boot − write = ${s(u.total)} − ${s(bootMs)} − ${s(i.writeMs)} = ${s(overhead)} s (target ≤ 5 s)`,
    `  with the upgrade's own boot instead: ${s(u.total)} − ${s(up.booted - up.start)} − ${s(i.writeMs)} = ${s(u.total - up.booted + up.start - i.writeMs)} s`,
  ];
  const bench = `BENCH P9 total_s=${s(u.total)} boot_s=${s(bootMs)} write_s=${s(i.writeMs)} overhead_s=${s(overhead)}`;
  return { lines, bench };
}
