// SPDX-License-Identifier: Apache-2.0
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { main } from './main.ts';
import { memoryIo } from './io.ts';

async function run(args: string[], env: Record<string, string> = {}) {
  const io = memoryIo(env);
  const code = await main(args, io);
  return { code, stdout: io.stdout(), stderr: io.stderr() };
}

describe('molt CLI: user errors get a code and a hint, never a stack trace', () => {
  it('rejects an unknown command with MOLT_BAD_FLAG and exit 1', async () => {
    const r = await run(['frobnicate']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error MOLT_BAD_FLAG: unknown command 'frobnicate'/);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
  });

  it('rejects an unknown option', async () => {
    const r = await run(['releases', 'list', '--registy', 'x']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /MOLT_BAD_FLAG: unknown option '--registy'/);
    assert.match(
      r.stderr,
      /hint: run `molt releases list --help`$/m,
      'the command it was given to',
    );
  });

  it('points an error before any command at molt --help, and one after options at their command', async () => {
    assert.match((await run(['--bogus'])).stderr, /hint: run `molt --help`$/m);
    const r = await run(['rollout', 'pause', '--context', 'lab', '--bogus']);
    assert.match(r.stderr, /hint: run `molt rollout pause --help`$/m);
  });

  it('names the missing required flag', async () => {
    const r = await run(['releases', 'list', '--repository', 'acme/installer']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /MOLT_BAD_FLAG: --registry is required/);
  });

  it('rejects an invalid repository name before any network call', async () => {
    const r = await run([
      'releases',
      'list',
      '--registry',
      '127.0.0.1:1',
      '--repository',
      'Acme/../x',
    ]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /MOLT_BAD_FLAG: --repository is not a valid OCI repository name/);
  });

  it('rejects an output format it does not know', async () => {
    const r = await run(['releases', 'list', '-o', 'xml']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /MOLT_BAD_FLAG: .*'xml'.*(table|json|yaml)/);
  });

  it('takes registry and repository from the environment', async () => {
    const r = await run(['releases', 'list', '--platform', 'nonsense'], {
      MOLT_REGISTRY: '127.0.0.1:1',
      MOLT_REPOSITORY: 'acme/installer',
    });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /MOLT_BAD_FLAG: --platform must look like linux\/amd64/);
  });

  it('refuses a username without a password', async () => {
    const r = await run([
      'releases',
      'list',
      '--registry',
      '127.0.0.1:1',
      '--repository',
      'a/b',
      '--username',
      'u',
    ]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /MOLT_BAD_FLAG: give both --username and --password/);
  });

  it('reports a public key file that is not a key', async () => {
    const r = await run([
      'releases',
      'list',
      '--registry',
      '127.0.0.1:1',
      '--repository',
      'a/b',
      '--public-key',
      'package.json',
    ]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /MOLT_PUBLIC_KEY_INVALID: package.json is not a PEM public key/);
  });
});

describe('molt CLI: review fixes', () => {
  it('a missing subcommand shows help and fails, so a script with a typo does not pass', async () => {
    const r = await run(['releases']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /Usage: molt releases/);
  });

  it('a flag given a bad value is described, not called missing', async () => {
    const r = await run([
      'releases',
      'list',
      '--registry',
      'r',
      '--repository',
      'a/b',
      '--timeout',
      'abc',
    ]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /MOLT_BAD_FLAG: --timeout must be a number of milliseconds/);
  });

  it('an invalid channel name is MOLT_INVALID_CHANNEL before any request', async () => {
    const r = await run([
      'releases',
      'latest',
      '--registry',
      '127.0.0.1:1',
      '--repository',
      'a/b',
      '--channel',
      'no such channel',
    ]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error MOLT_INVALID_CHANNEL: /m);
  });
});

describe('molt CLI: help and version', () => {
  it('prints help with exit 0', async () => {
    const r = await run(['releases', '--help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /list/);
    assert.match(r.stdout, /latest/);
  });

  it('prints its version, as `molt version` and as `molt --version` / `-V`', async () => {
    const r = await run(['version']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^molt \d+\.\d+\.\d+ \(node 24\./);
    for (const flag of ['--version', '-V']) {
      const v = await run([flag]);
      assert.equal(v.code, 0, v.stderr);
      assert.equal(v.stdout, r.stdout);
    }
  });

  it('leaves a verb its own --version flag (molt dev publish --version 1.4.0)', async () => {
    const r = await run(['dev', 'publish', '--version', '1.4.0']);
    assert.equal(r.code, 1);
    assert.doesNotMatch(r.stdout, /^molt \d/, 'not molt’s version');
    assert.match(r.stderr, /MOLT_BAD_FLAG/);
  });

  it('lists every verb in `molt --help`, the processes and the lab’s verbs included', async () => {
    const r = await run(['--help']);
    assert.equal(r.code, 0);
    for (const verb of [
      'releases',
      'node',
      'rollout',
      'machine',
      'cluster',
      'completion',
      'version',
    ])
      assert.match(r.stdout, new RegExp(`^  ${verb}\\b`, 'm'), verb);
    const processes = r.stdout.slice(r.stdout.indexOf('Processes:'));
    for (const verb of ['agent', 'operator', 'lab', 'image', 'install'])
      assert.match(processes, new RegExp(`^  ${verb}\\b`, 'm'), verb);
    assert.match(processes, /lab\s+.*up\|status\|env\|publish\|down/);
  });
});
