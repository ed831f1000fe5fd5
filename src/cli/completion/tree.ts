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
  /**
   * Names its first positional takes that only the operator knows, asked at completion time
   * (`molt __complete rollouts|machines`): a rollout id, a machine name.
   */
  readonly dynamic?: DynamicNames;
}

/** What `molt __complete KIND` lists. */
export const DynamicNamesKinds = ['rollouts', 'machines'] as const;
export type DynamicNames = (typeof DynamicNamesKinds)[number];

/**
 * The operator's names a command's first argument takes: read off the argument's name (`machine`)
 * and, for a bare `id`, off the group it is in (`molt rollout pause <id>` takes a rollout).
 */
function dynamicOf(cmd: Command, parent: string | undefined): DynamicNames | undefined {
  const arg = cmd.registeredArguments[0]?.name();
  if (arg === 'machine') return 'machines';
  if (arg === 'rollout') return 'rollouts';
  if (cmd.name() === 'register') return undefined; // a machine the operator does not know yet
  if (arg !== 'id') return undefined;
  if (parent === 'molt rollout') return 'rollouts';
  if (parent === 'molt machine') return 'machines';
  return undefined;
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
  const children = cmd.commands
    .filter((c) => !c.name().startsWith('__')) // molt's own helpers, not for people
    .map((c) => completionTree(c, path));
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
    ...dynamicField(cmd, parent),
  };
}

const dynamicField = (cmd: Command, parent: string | undefined): { dynamic?: DynamicNames } => {
  const dynamic = dynamicOf(cmd, parent);
  return dynamic === undefined ? {} : { dynamic };
};

/** Every node of the tree, the root first. */
export function allNodes(root: CompletionNode): CompletionNode[] {
  return [root, ...root.children.flatMap(allNodes)];
}
