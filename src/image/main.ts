// SPDX-License-Identifier: Apache-2.0
/**
 * Composition root of the verbs that make OS images and disks on a build host or an admin's
 * machine (docs/real-machines.md, docs/adr/0008): `molt image build` and `molt install`.
 */
import type { AgentIo as Io } from '../agent/main.ts';
import { runImageBuild } from './build/command.ts';
import { runInstall } from './install/command.ts';

export async function runImageCommand(argv: readonly string[], io: Io): Promise<number> {
  const [verb, ...rest] = argv;
  if (verb === 'build') return runImageBuild(rest, io);
  io.err('usage: molt image build --version V --out DIR [options] (molt image build --help)\n');
  return 2;
}

export async function runInstallCommand(argv: readonly string[], io: Io): Promise<number> {
  return runInstall(argv, io);
}
