// SPDX-License-Identifier: Apache-2.0
import { Command, CommanderError } from 'commander';
import { ErrorCode, MoltError } from '../core/errors.ts';
import { describeError } from './errors.ts';
import type { CommandContext } from './context.ts';
import { ExitCode, type CliIo } from './io.ts';
import { releasesCommand } from './commands/releases/index.ts';
import { devCommand } from './commands/dev/index.ts';
import { versionCommand, versionLine } from './commands/version/index.ts';
import { completeNamesCommand, completionCommand } from './commands/completion/index.ts';
import { processCommands } from './commands/processes/index.ts';
import { nodeCommand } from './commands/node/index.ts';
import { pkiCommand } from './commands/pki/index.ts';
import { planCommand } from './commands/plan/index.ts';
import { rolloutCommand } from './commands/rollout/index.ts';
import { machineCommand } from './commands/machine/index.ts';
import { historyCommand } from './commands/history/index.ts';
import { configCommand } from './commands/config/index.ts';
import { clusterCommand } from './commands/cluster/index.ts';
import { imagesCommand } from './commands/images/index.ts';
import { capiCommand } from './commands/capi/index.ts';

/** Build the `molt` command tree. Each verb's module is small; heavy work is imported lazily. */
export function buildProgram(ctx: CommandContext): Command {
  const program = new Command('molt')
    .description('Keep fleets of image-based machines on the right release.')
    .version(versionLine(), '-V, --version', 'print the molt version')
    // `molt --version` is molt's only before a verb: `molt dev publish --version 1.4.0` is the
    // verb's own flag (commander would otherwise take it for molt's anywhere on the line).
    .enablePositionalOptions();
  program.addCommand(releasesCommand(ctx));
  program.addCommand(devCommand(ctx));
  program.addCommand(nodeCommand(ctx));
  program.addCommand(pkiCommand(ctx));
  program.addCommand(planCommand(ctx));
  program.addCommand(rolloutCommand(ctx));
  program.addCommand(machineCommand(ctx));
  program.addCommand(clusterCommand(ctx));
  program.addCommand(imagesCommand(ctx));
  program.addCommand(capiCommand(ctx));
  program.addCommand(historyCommand(ctx));
  program.addCommand(configCommand(ctx));
  program.addCommand(versionCommand(ctx));
  program.addCommand(completionCommand(ctx));
  program.addCommand(completeNamesCommand(ctx), { hidden: true });
  for (const p of processCommands()) program.addCommand(p);
  configure(program, ctx);
  return program;
}

/**
 * Commands built with `new Command` and `addCommand` do not inherit their parent's settings, so
 * every command gets the same output routing and error handling here. Commander's own error
 * printing is off: {@link main} prints every error once, with its code.
 */
function configure(command: Command, ctx: CommandContext): void {
  command
    .exitOverride()
    .configureOutput({ writeOut: ctx.io.out, writeErr: ctx.io.err, outputError: () => undefined });
  for (const c of command.commands) configure(c, ctx);
}

/** Run molt with `argv` (without node and script); returns the exit code. Never throws. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  let code: number = ExitCode.Ok;
  const ctx: CommandContext = { io, setExitCode: (c) => (code = c) };
  const program = buildProgram(ctx);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return code;
  } catch (e) {
    if (e instanceof CommanderError) return commanderExit(e, io, commandPath(program, argv));
    io.err(describeError(e));
    return ExitCode.Error;
  }
}

/**
 * Commander's own outcomes: asked-for help and the version are success; help shown because a
 * subcommand is missing (`molt releases`) is a failure, so a script with a typo does not pass;
 * parse errors are MOLT_BAD_FLAG.
 */
function commanderExit(e: CommanderError, io: CliIo, command: string): number {
  if (e.exitCode === 0) return ExitCode.Ok;
  if (e.code === 'commander.help') return ExitCode.Error;
  const message = e.message.replace(/^error: /, '');
  io.err(
    describeError(new MoltError(ErrorCode.BadFlag, message, { hint: `run \`${command} --help\`` })),
  );
  return ExitCode.Error;
}

/** The command `argv` names (`molt rollout pause`), as far as its words are commands. */
export function commandPath(program: Command, argv: readonly string[]): string {
  const words = ['molt'];
  let at = program;
  for (const word of argv) {
    if (word.startsWith('-')) continue;
    const next = at.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (next === undefined) break;
    words.push(next.name());
    at = next;
  }
  return words.join(' ');
}
