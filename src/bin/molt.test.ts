// SPDX-License-Identifier: Apache-2.0
// The binary's own routing: `molt <process> --help` and `molt help <process>` print that process's
// usage with exit 0 (`molt operator --help` failed on --config, `molt help lab` printed
// the top level), and the process verbs `molt --help` lists carry the flags each usage names.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { Command } from 'commander';
import { processCommands } from '../cli/commands/processes/index.ts';
import { moltArgv } from '../testkit/molt-entry.ts';
import { ErrorCode, isMoltError } from '../core/errors.ts';

const run = promisify(execFile);

async function molt(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const [node = process.execPath, ...entry] = moltArgv;
  try {
    const r = await run(node, [...entry, ...args]);
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: x.code ?? -1, stdout: x.stdout ?? '', stderr: x.stderr ?? '' };
  }
}

/** `molt <process> …` run in-process by its composition root, as src/bin/molt.ts runs it. */
async function runProcess(argv: readonly string[]) {
  const [name, ...rest] = argv;
  let stdout = '';
  let stderr = '';
  const io = { out: (t: string) => (stdout += t), err: (t: string) => (stderr += t) };
  const code =
    name === 'agent'
      ? await (await import('../agent/main.ts')).runAgentCommand(rest, io)
      : name === 'operator'
        ? await (await import('../operator/main.ts')).runOperatorCommand(rest, io)
        : name === 'lab'
          ? await (await import('../lab/main.ts')).runLab(rest, io, moltArgv)
          : name === 'image'
            ? await (await import('../image/main.ts')).runImageCommand(rest, io)
            : await (await import('../image/main.ts')).runInstallCommand(rest, io);
  return { code, stdout, stderr };
}

/** Every process verb and sub-verb, as `molt …` argv: `['lab', 'up']`. */
function verbs(): { argv: string[]; cmd: Command }[] {
  const walk = (cmd: Command, argv: string[]): { argv: string[]; cmd: Command }[] => [
    { argv, cmd },
    ...cmd.commands.flatMap((c) => walk(c, [...argv, c.name()])),
  ];
  return processCommands().flatMap((c) => walk(c, [c.name()]));
}

describe('molt <process> --help', () => {
  const all = verbs();
  const helps = Promise.all(
    all.map(async (v) => ({ ...v, r: await runProcess([...v.argv, '--help']) })),
  );

  it('prints the process’s own usage on stdout with exit 0, for every process and sub-verb', async () => {
    for (const { argv, r } of await helps) {
      const what = `molt ${argv.join(' ')} --help`;
      assert.equal(r.code, 0, `${what}: ${r.stderr}`);
      assert.equal(r.stderr, '', what);
      assert.match(r.stdout, new RegExp(`^Usage: molt ${argv[0] ?? ''}\\b`), what);
    }
  });

  it('lists in `molt --help` only flags the process’s usage names, and every flag it names', async () => {
    for (const { argv, cmd, r } of await helps) {
      const what = `molt ${argv.join(' ')}`;
      for (const o of cmd.options) {
        const named = [o.long, o.short].some((n) => n !== undefined && r.stdout.includes(n));
        assert.ok(named, `${what}: ${o.flags} is not in its usage`);
      }
      // The other way: the flags of a usage's option lines (commander gives every command
      // --help). A verb with sub-verbs lists only its own flags, so it is compared one way only.
      if (cmd.commands.length > 0) continue;
      const longs = new Set([...cmd.options.map((o) => o.long), '--help']);
      for (const [, flag = ''] of r.stdout.matchAll(/^ {2}(?:-[a-z], )?(--[a-z][a-z-]+)/gm))
        assert.ok(longs.has(flag), `${what}: its usage names ${flag}, molt --help does not`);
    }
  });

  it('answers `molt help <process> [verb]` with the process’s usage, through the binary', async () => {
    const direct = await molt('operator', '--help');
    assert.equal(direct.code, 0, direct.stderr);
    assert.match(direct.stdout, /^Usage: molt operator --config FILE/);
    const lab = await molt('help', 'lab');
    assert.equal(lab.code, 0, lab.stderr);
    assert.match(lab.stdout, /^Usage: molt lab up /);
    const machine = await molt('help', 'lab', 'machine');
    assert.match(machine.stdout, /^Usage: molt lab machine --root DIR/);
    const operator = await molt('help', 'operator');
    assert.equal(operator.code, 0, operator.stderr);
    assert.match(operator.stdout, /^Usage: molt operator --config FILE/);
    const rollout = await molt('help', 'rollout');
    assert.match(rollout.stdout, /^Usage: molt rollout \[options\] \[command\]/);
  });
});

describe('what a short command loads', () => {
  // Each package module Node resolves is written to stderr by a resolve hook.
  const hook = `data:text/javascript,${encodeURIComponent(
    "import { registerHooks } from 'node:module';" +
      'registerHooks({ resolve(s, c, next) { const r = next(s, c);' +
      " if (r.url.includes('/node_modules/')) process.stderr.write('LOADED ' + r.url + '\\n');" +
      ' return r; } });',
  )}`;
  const env = { ...process.env, MOLT_CONFIG: '/nonexistent/molt/config.yaml' };
  const packagesLoaded = async (args: string[]): Promise<string[]> => {
    const [node = process.execPath, ...entry] = moltArgv;
    const stderr = await run(node, ['--import', hook, ...entry, ...args], { env }).then(
      (r) => r.stderr,
      (e: unknown) => (e as { stderr: string }).stderr,
    );
    const loaded = stderr.split('\n').filter((l) => l.startsWith('LOADED '));
    return [...new Set(loaded.map((l) => /\/node_modules\/((@[^/]+\/)?[^/]+)/.exec(l)?.[1]))]
      .filter((p) => p !== undefined)
      .sort();
  };

  it('answers `molt --version` and `molt --help` from the command tree alone: commander, not zod or yaml', async () => {
    assert.deepEqual(await packagesLoaded(['--version']), ['commander']);
    assert.deepEqual(await packagesLoaded(['--help']), ['commander']);
  });

  it('asks the operator with Node’s own https: `molt rollout list` loads no HTTP library', async () => {
    const loaded = await packagesLoaded(['rollout', 'list', '--endpoint', 'https://127.0.0.1:1']);
    assert.deepEqual(loaded, ['commander', 'yaml', 'zod']);
  });
});

describe('a process verb holds each of its verbs to its own flags', () => {
  for (const argv of [
    ['agent', '--root', '/nonexistent', '--image', 'r/x:1'],
    ['lab', 'status', '--vms', '2', '--dir', '/nonexistent'],
  ])
    it(`refuses \`molt ${argv.join(' ')}\` with MOLT_BAD_FLAG naming the flag`, async () => {
      await assert.rejects(runProcess(argv), (e: unknown) => {
        assert.ok(isMoltError(e, ErrorCode.BadFlag), String(e));
        assert.match(e.message, argv[0] === 'agent' ? /--image/ : /--vms/);
        return true;
      });
    });
});
