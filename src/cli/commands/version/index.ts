// SPDX-License-Identifier: Apache-2.0
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import type { CommandContext } from '../../context.ts';

/** molt's own version, read from package.json next to the sources or the build output. */
export function moltVersion(): string {
  for (const rel of ['../../../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'molt' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // try the next layout (sources vs dist)
    }
  }
  return 'unknown';
}

/** What `molt version` and `molt --version` print: molt's version and the Node.js it runs on. */
export const versionLine = (): string => `molt ${moltVersion()} (node ${process.versions.node})`;

/** `molt version`: prints {@link versionLine}. */
export function versionCommand(ctx: CommandContext): Command {
  return new Command('version').description('print the molt version').action(() => {
    ctx.io.out(`${versionLine()}\n`);
  });
}
