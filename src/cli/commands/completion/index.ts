// SPDX-License-Identifier: Apache-2.0
import { Argument, Command } from 'commander';
import type { CommandContext } from '../../context.ts';
import { fishScript } from '../../completion/fish.ts';
import { bashScript, zshScript } from '../../completion/posix.ts';
import { completionTree, DynamicNamesKinds, type DynamicNames } from '../../completion/tree.ts';

const shells = { bash: bashScript, zsh: zshScript, fish: fishScript } as const;

/** The root of the tree `cmd` is in. */
const rootOf = (cmd: Command): Command => (cmd.parent === null ? cmd : rootOf(cmd.parent));

/** `molt completion bash|zsh|fish`: a completion script generated from molt's own command tree. */
export function completionCommand(ctx: CommandContext): Command {
  return new Command('completion')
    .description('print a shell completion script (install: see the README)')
    .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(Object.keys(shells)))
    .addHelpText(
      'after',
      '\nInstall:\n' +
        '  bash  echo \'eval "$(molt completion bash)"\' >> ~/.bashrc\n' +
        "  zsh   echo 'source <(molt completion zsh)' >> ~/.zshrc   (after compinit)\n" +
        '  fish  molt completion fish > ~/.config/fish/completions/molt.fish\n',
    )
    .action((shell: keyof typeof shells, _o: unknown, cmd: Command) => {
      ctx.io.out(shells[shell](completionTree(rootOf(cmd))));
    });
}

/** `molt __complete rollouts|machines`: hidden, for the scripts above (see names.ts). */
export function completeNamesCommand(ctx: CommandContext): Command {
  return new Command('__complete')
    .addArgument(new Argument('<kind>').choices(DynamicNamesKinds))
    .action(async (kind: DynamicNames) => {
      const { runCompleteNames } = await import('./names.ts');
      await runCompleteNames(ctx, kind);
    });
}
