// SPDX-License-Identifier: Apache-2.0
/**
 * Benchmark R1's probes of a running operator: the operator API over mutual TLS and the dashboard
 * listener (plain HTTP) asked what their clients ask — a few people's worth: each API read once a
 * second, the page's three reads every 2 s — each answer timed; `/metrics` scraped every 500 ms for
 * the last pass's start time and duration (a pass is followed by ≥ 200 ms of rest, so passes
 * shorter than ~300 ms can be missed: the report says how many were seen of how many ran; at
 * 500 ms rather than faster because every scrape reads the whole store, and at 2,000 machines a
 * faster probe is itself the load); the operator's resident memory and CPU time from /proc.
 */
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, fetch } from 'undici';

/** One timed answer. */
export interface Timed {
  readonly phase: string;
  readonly path: string;
  readonly ms: number;
  readonly ok: boolean;
}

/** One reconcile pass, as `/metrics` reported it. */
export interface PassSample {
  readonly phase: string;
  readonly startedAt: number;
  readonly ms: number;
}

export interface ProbeOptions {
  readonly apiUrl: string;
  readonly dashboardUrl: string;
  readonly tls: { readonly ca: string; readonly cert: string; readonly key: string };
  readonly pid: number;
}

/** Nearest-rank percentile of `values` (0 when empty). */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

/** A field of /proc/<pid>/status in MB (`VmRSS`, `VmHWM`). */
export async function procMb(pid: number, field: string): Promise<number> {
  const status = await readFile(`/proc/${String(pid)}/status`, 'utf8');
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  return Number(m?.[1] ?? 0) / 1024;
}

/** User + system CPU seconds of a process so far (/proc/<pid>/stat, 100 ticks a second). */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${String(pid)}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const metric = (text: string, name: string): number | undefined => {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return m?.[1] === undefined ? undefined : Number(m[1]);
};

/** The probes, running until {@link Probe.stop}; `phase` tags what they record from now on. */
export class Probe {
  phase = 'start';
  readonly answers: Timed[] = [];
  readonly passes = new Map<number, PassSample>();
  readonly rss: { phase: string; mb: number }[] = [];
  passesOk = 0;
  passesFailed = 0;
  readonly #api: Agent;
  readonly #stop = new AbortController();
  readonly #loops: Promise<void>[];

  readonly o: ProbeOptions;

  constructor(o: ProbeOptions) {
    this.o = o;
    this.#api = new Agent({ connect: { ...o.tls }, headersTimeout: 60_000, bodyTimeout: 60_000 });
    this.#loops = [
      this.#every(1_000, () => this.#timed('api', '/v1/rollouts')),
      this.#every(1_000, () => this.#timed('api', '/v1/machines')),
      this.#every(2_000, async () => {
        for (const p of ['/v1/machines', '/v1/rollouts', '/v1/plan'])
          await this.#timed('dashboard', p);
      }),
      this.#every(500, () => this.#scrape()),
      this.#every(1_000, async () => {
        this.rss.push({ phase: this.phase, mb: await procMb(o.pid, 'VmRSS') });
      }),
    ];
  }

  /** GET `path` on the API (mTLS) and parse it as JSON. */
  async get<T>(path: string): Promise<T> {
    const res = await fetch(`${this.o.apiUrl}${path}`, { dispatcher: this.#api });
    if (res.status !== 200)
      throw new Error(`GET ${path}: ${String(res.status)} ${await res.text()}`);
    return (await res.json()) as T;
  }

  async #every(ms: number, f: () => Promise<void>): Promise<void> {
    while (!this.#stop.signal.aborted) {
      const t0 = performance.now();
      await f().catch(() => undefined);
      const rest = ms - (performance.now() - t0);
      if (rest > 0)
        await sleep(rest, undefined, { signal: this.#stop.signal }).catch(() => undefined);
    }
  }

  async #timed(listener: 'api' | 'dashboard', path: string): Promise<void> {
    const phase = this.phase;
    const t0 = performance.now();
    let ok = false;
    try {
      const res =
        listener === 'api'
          ? await fetch(`${this.o.apiUrl}${path}`, { dispatcher: this.#api })
          : await fetch(`${this.o.dashboardUrl}${path.slice(1)}`);
      await res.arrayBuffer();
      ok = res.status === 200;
    } finally {
      this.answers.push({ phase, path: `${listener} ${path}`, ms: performance.now() - t0, ok });
    }
  }

  async #scrape(): Promise<void> {
    const res = await fetch(`${this.o.apiUrl}/metrics`, { dispatcher: this.#api });
    const text = await res.text();
    const startedAt = metric(text, 'molt_operator_last_pass_timestamp_seconds');
    const seconds = metric(text, 'molt_operator_last_pass_duration_seconds');
    this.passesOk = metric(text, 'molt_operator_reconcile_passes_total\\{result="ok"\\}') ?? 0;
    this.passesFailed =
      metric(text, 'molt_operator_reconcile_passes_total\\{result="failed"\\}') ?? 0;
    if (startedAt === undefined || seconds === undefined || startedAt === 0) return;
    if (!this.passes.has(startedAt))
      this.passes.set(startedAt, { phase: this.phase, startedAt, ms: seconds * 1000 });
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await Promise.all(this.#loops);
    await this.#api.close();
  }
}
