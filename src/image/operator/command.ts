// SPDX-License-Identifier: Apache-2.0
/**
 * `molt image build --operator`: flags → build → the summary (text, or JSON with `--json`).
 * Progress goes to stderr, so `--json` output can be piped.
 */
import type { AgentIo as Io } from '../../agent/main.ts';
import { buildOperatorImage, type OperatorImageSummary } from './build.ts';
import { parseOperatorOptions } from './options.ts';

const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

export function renderOperatorSummary(s: OperatorImageSummary): string {
  const lines = [
    `molt operator image ${s.version} (${s.node}): ${s.digest}`,
    ...s.layers.map(
      (l) =>
        `  ${l.name.padEnd(7)} ${mib(l.bytes).padStart(10)} (${mib(l.tarBytes)} unpacked)  ${l.digest}`,
    ),
    `  total   ${mib(s.bytes).padStart(10)} compressed`,
    ...(s.revision === undefined ? [] : [`revision: ${s.revision}`]),
    ...(s.layout === undefined ? [] : [`layout: ${s.layout.dir} (${s.layout.tag})`]),
    ...(s.pushed === undefined ? [] : [`pushed: ${s.pushed}`]),
    `built in ${(s.ms / 1000).toFixed(1)} s`,
  ];
  return `${lines.join('\n')}\n`;
}

/** Run `molt image build --operator …`; `usage` is `molt image build`'s whole help text. */
export async function runOperatorBuild(
  argv: readonly string[],
  io: Io,
  usage: string,
): Promise<number> {
  const o = parseOperatorOptions(argv, process.env);
  if (o === null) {
    io.out(usage);
    return 0;
  }
  const summary = await buildOperatorImage(o, (line) => {
    io.err(`molt image build: ${line}\n`);
  });
  io.out(o.json ? `${JSON.stringify(summary, null, 2)}\n` : renderOperatorSummary(summary));
  return 0;
}
