// SPDX-License-Identifier: Apache-2.0
// What `molt <verb> …` runs, once the entry point has turned V8's compile cache on: client verbs
// go to the CLI; the long-running processes (`molt agent`, `molt operator`, `molt lab`) are separate
// composition roots, imported only when asked for, so a client command never loads the agent's
// server stack — and, the other way round, the agent never loads the CLI's command tree
// (commander and every verb: 1–2 MB of its idle RSS, benchmark P6).
import { describeError } from '../cli/errors.ts';
import { processIo } from '../cli/io.ts';

const argv = process.argv.slice(2);
const io = processIo();
/** How this molt starts itself again (the lab firmware boots `molt agent`). */
const self = [process.execPath, process.argv[1] ?? 'molt'];

type Daemon = 'agent' | 'lab' | 'operator' | 'image' | 'install';
const daemons: readonly string[] = [
  'agent',
  'lab',
  'operator',
  'image',
  'install',
] satisfies Daemon[];

async function daemon(verb: Daemon, rest: readonly string[]): Promise<number> {
  try {
    if (verb === 'agent') return await (await import('../agent/main.ts')).runAgentCommand(rest, io);
    if (verb === 'operator')
      return await (await import('../operator/main.ts')).runOperatorCommand(rest, io);
    if (verb === 'image') return await (await import('../image/main.ts')).runImageCommand(rest, io);
    if (verb === 'install')
      return await (await import('../image/main.ts')).runInstallCommand(rest, io);
    return await (await import('../lab/main.ts')).runLab(rest, io, self);
  } catch (error) {
    io.err(describeError(error));
    return 1;
  }
}

/**
 * `molt help <process> [verb]` is `molt <process> [verb] --help`: each process prints its own usage
 * (commander knows the processes only by name, for `molt --help` and completion).
 */
function route(args: readonly string[]): { daemon: Daemon; rest: readonly string[] } | undefined {
  const [verb, ...rest] = args;
  if (verb === 'help' && rest[0] !== undefined && daemons.includes(rest[0]))
    return { daemon: rest[0] as Daemon, rest: [...rest.slice(1), '--help'] };
  return verb !== undefined && daemons.includes(verb)
    ? { daemon: verb as Daemon, rest }
    : undefined;
}

const routed = route(argv);
process.exitCode =
  routed !== undefined
    ? await daemon(routed.daemon, routed.rest)
    : await (await import('../cli/main.ts')).main(argv, io);
