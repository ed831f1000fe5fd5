// SPDX-License-Identifier: Apache-2.0
/**
 * Composition root of the verbs that make OS images and disks on a build host or an admin's
 * machine (docs/real-machines.md, docs/adr/0008): `molt image build` and `molt install`.
 */
import type { AgentIo as Io } from '../agent/main.ts';
import { runImageBuild } from './build/command.ts';
import { runInstall } from './install/command.ts';

const usage = `Usage: molt image build --version V --out DIR [options]

Builds OS releases from Debian packages (docs/image.md); molt image build --help lists the flags.
`;

export async function runImageCommand(argv: readonly string[], io: Io): Promise<number> {
  const [verb, ...rest] = argv;
  if (verb === 'build') return runImageBuild(rest, io);
  if (verb === '--help' || verb === '-h' || verb === 'help') {
    io.out(usage);
    return 0;
  }
  io.err(usage);
  return 2;
}

export async function runInstallCommand(argv: readonly string[], io: Io): Promise<number> {
  return runInstall(argv, io);
}
