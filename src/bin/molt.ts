#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// The only entry point: `molt <verb> …`. Client verbs go to the CLI; the long-running processes
// (`molt agent`, `molt lab`) are separate composition roots, imported only when asked for, so a
// client command never loads the agent's server stack.
import { describeError } from '../cli/errors.ts';
import { main } from '../cli/main.ts';
import { processIo } from '../cli/io.ts';

const argv = process.argv.slice(2);
const io = processIo();
/** How this molt starts itself again (the lab firmware boots `molt agent`). */
const self = [process.execPath, process.argv[1] ?? 'molt'];

async function daemon(verb: 'agent' | 'lab', rest: readonly string[]): Promise<number> {
  try {
    if (verb === 'agent') return await (await import('../agent/main.ts')).runAgentCommand(rest, io);
    return await (await import('../lab/main.ts')).runLab(rest, io, self);
  } catch (error) {
    io.err(describeError(error));
    return 1;
  }
}

const [verb, ...rest] = argv;
process.exitCode =
  verb === 'agent' || verb === 'lab' ? await daemon(verb, rest) : await main(argv, io);
