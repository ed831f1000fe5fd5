// SPDX-License-Identifier: Apache-2.0
/**
 * `molt image build`: flags → build → the summary (text, or image.json with `--json`). Progress
 * goes to stderr, so `--json` output can be piped. `--operator` builds the operator's container
 * image instead (../operator).
 */
import type { AgentIo as Io } from '../../agent/main.ts';
import { runOperatorBuild } from '../operator/command.ts';
import { wantsOperator } from '../operator/options.ts';
import { buildImage } from './build.ts';
import { parseBuildOptions, usage } from './options.ts';
import { renderSummary } from './summary.ts';

export async function runImageBuild(argv: readonly string[], io: Io): Promise<number> {
  if (wantsOperator(argv)) return runOperatorBuild(argv, io, usage);
  const o = parseBuildOptions(argv, process.env);
  if (o === null) {
    io.out(usage);
    return 0;
  }
  const summary = await buildImage(o, (line) => {
    io.err(`molt image build: ${line}\n`);
  });
  io.out(o.json ? `${JSON.stringify(summary, null, 2)}\n` : renderSummary(summary, o.out));
  return 0;
}
