// SPDX-License-Identifier: Apache-2.0
/**
 * Wait for the operator to reconcile a few more times, for tests that assert something does *not*
 * happen (a halted rollout starts nothing, a closed window moves no machine). A fixed sleep there
 * is either too short on a loaded machine — the assertion passes because the operator never got to
 * look, so the test cannot fail — or too long everywhere else. Counting passes makes the wait
 * mean "the operator considered it n times", whatever the machine's speed.
 *
 * Both ok and failed passes count: a failed pass still looked, and a test that needs ok ones
 * asserts on what the pass did instead.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import type { OperatorLoop } from '../operator/loop/loop.ts';

/**
 * Where the passes are counted: the loop object when the test runs the operator in its own
 * process, or a scrape of `GET /metrics` (`molt_operator_reconcile_passes_total`) when the
 * operator is a separate process.
 */
export type PassSource =
  Pick<OperatorLoop, 'nextPass'> | { readonly metrics: () => Promise<string> };

export interface AfterPassesOptions {
  /** Fail after this long. @default 60_000 */
  readonly timeoutMs?: number;
  /** How often `/metrics` is read. @default 100 */
  readonly intervalMs?: number;
}

const counter = /^molt_operator_reconcile_passes_total\{result="(?:ok|failed)"\} (\d+)$/gm;

/** Passes completed so far (ok and failed) in an exposition text; throws when it has no such family. */
export function passesIn(metrics: string): number {
  const counts = [...metrics.matchAll(counter)].map((m) => Number(m[1]));
  if (counts.length === 0)
    throw new Error('no molt_operator_reconcile_passes_total in the /metrics text');
  return counts.reduce((a, b) => a + b, 0);
}

/**
 * Resolves once `n` more reconcile passes have completed than had when it was called. The first
 * may have begun before the call, so pass n ≥ 2 when the state the test just set up must have been
 * seen. Rejects after `timeoutMs` saying how many did complete: an operator that stopped passing
 * makes the test fail, not pass vacuously.
 */
export async function afterPasses(
  from: PassSource,
  n: number,
  o: AfterPassesOptions = {},
): Promise<void> {
  const timeoutMs = o.timeoutMs ?? 60_000;
  const deadline = performance.now() + timeoutMs;
  let done = 0;
  const late = (): Error =>
    new Error(
      `${String(n)} more reconcile passes did not complete within ${String(timeoutMs)} ms (${String(done)} did)`,
    );
  if ('nextPass' in from) {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(late());
      }, timeoutMs);
    });
    try {
      for (; done < n; done++) await Promise.race([from.nextPass(), expired]);
    } finally {
      clearTimeout(timer);
    }
    return;
  }
  const start = passesIn(await from.metrics());
  for (;;) {
    done = passesIn(await from.metrics()) - start;
    if (done >= n) return;
    if (performance.now() > deadline) throw late();
    await new Promise((r) => setTimeout(r, o.intervalMs ?? 100));
  }
}

/** A {@link PassSource} over the network, and the connection pool to close after. */
export interface ScrapedOperator {
  readonly metrics: () => Promise<string>;
  /** `GET path` of the same API, its JSON answer (what the operator says it did). */
  json(path: string): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * `GET /metrics` of the operator process serving at `api` (`https://…`), as the operator client of
 * a lab fleet's PKI directory (`ca.pem`, `operator.pem`, `operator.key`).
 */
export async function scrapeOperator(api: string, pki: string): Promise<ScrapedOperator> {
  const read = (f: string): Promise<string> => readFile(join(pki, f), 'utf8');
  const dispatcher = new Agent({
    connect: {
      ca: await read('ca.pem'),
      cert: await read('operator.pem'),
      key: await read('operator.key'),
    },
  });
  const get = async (path: string): Promise<string> => {
    const res = await request(`${api.replace(/\/$/, '')}${path}`, { dispatcher });
    const text = await res.body.text();
    if (res.statusCode !== 200)
      throw new Error(`GET ${api}${path}: ${String(res.statusCode)} ${text}`);
    return text;
  };
  return {
    metrics: () => get('/metrics'),
    json: async (path) => JSON.parse(await get(path)) as unknown,
    close: () => dispatcher.close(),
  };
}
