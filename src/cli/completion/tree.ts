// SPDX-License-Identifier: Apache-2.0
/**
 * The command tree as shell completion needs it, read from commander's own tree (src/cli/main.ts),
 * so a new verb or flag completes without anyone editing a completion script.
 */
import type { Command } from 'commander';

/** One flag: its spellings, whether a value follows it, and the values it takes if it says. */
export interface CompletionFlag {
  /** `--output` and `-o`. */
  readonly names: readonly string[];
  readonly takesValue: boolean;
  readonly choices: readonly string[];
  readonly description: string;
}

/** One command: its path from the root (`molt rollout list`), subcommands and flags. */
export interface CompletionNode {
  readonly path: string;
  readonly name: string;
  readonly description: string;
  readonly children: readonly CompletionNode[];
  readonly flags: readonly CompletionFlag[];
  /** Values its first positional takes (`molt completion bash|zsh|fish`). */
  readonly argChoices: readonly string[];
}

const help: CompletionFlag = {
  names: ['--help', '-h'],
  takesValue: false,
  choices: [],
  description: 'display help for command',
};

function flagsOf(cmd: Command): CompletionFlag[] {
  const own = cmd.options
    .filter((o) => !o.hidden)
    .map((o) => ({
      names: [o.long, o.short].filter((n): n is string => n !== undefined),
      takesValue: o.required || o.optional,
      choices: o.argChoices ?? [],
      description: o.description,
    }));
  return [...own, help];
}

/** `cmd` and everything under it; the root also gets `help <command>`. */
export function completionTree(cmd: Command, parent?: string): CompletionNode {
  const path = parent === undefined ? cmd.name() : `${parent} ${cmd.name()}`;
  const children = cmd.commands.map((c) => completionTree(c, path));
  const helpVerb: CompletionNode = {
    path: `${path} help`,
    name: 'help',
    description: 'display help for command',
    children: [],
    flags: [],
    argChoices: children.map((c) => c.name),
  };
  return {
    path,
    name: cmd.name(),
    description: cmd.description(),
    children: parent === undefined ? [...children, helpVerb] : children,
    flags: flagsOf(cmd),
    argChoices: cmd.registeredArguments[0]?.argChoices ?? [],
  };
}

/** Every node of the tree, the root first. */
export function allNodes(root: CompletionNode): CompletionNode[] {
  return [root, ...root.children.flatMap(allNodes)];
}
