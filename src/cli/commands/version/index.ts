// SPDX-License-Identifier: Apache-2.0
import { Command } from 'commander';
import { packageVersion } from '../../../platform/package-files.ts';
import type { CommandContext } from '../../context.ts';

/** What `molt version` and `molt --version` print: molt's version and the Node.js it runs on. */
export const versionLine = (): string => `molt ${packageVersion} (node ${process.versions.node})`;

/** `molt version`: prints {@link versionLine}. */
export function versionCommand(ctx: CommandContext): Command {
  return new Command('version').description('print the molt version').action(() => {
    ctx.io.out(`${versionLine()}\n`);
  });
}
