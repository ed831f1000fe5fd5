// SPDX-License-Identifier: Apache-2.0
// `molt completion bash|zsh|fish`, run in the real shells: the bash script is sourced into bash and
// asked with COMP_WORDS/COMP_CWORD, as bash's programmable completion asks it; fish (when this
// machine has it) with `complete -C`.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { memoryIo } from '../io.ts';
import { main } from '../main.ts';

const run = promisify(execFile);

async function script(shell: string): Promise<string> {
  const io = memoryIo();
  assert.equal(await main(['completion', shell], io), 0, io.stderr());
  return io.stdout();
}

const has = async (program: string): Promise<boolean> =>
  run('sh', ['-c', `command -v ${program}`]).then(
    () => true,
    () => false,
  );

/** What bash completes for the words typed so far (the last one is under the cursor). */
async function bashComplete(
  source: string,
  typed: readonly string[],
  path?: string,
): Promise<string[]> {
  const words = typed.map((w) => `'${w}'`).join(' ');
  const probe = `${path === undefined ? '' : `PATH=${path}:$PATH\n`}${source}
COMP_WORDS=(molt ${words}); COMP_CWORD=${String(typed.length)}; COMPREPLY=()
_molt
printf '%s\\n' "\${COMPREPLY[@]}"`;
  const { stdout } = await run('bash', ['--norc', '--noprofile', '-c', probe]);
  return stdout.split('\n').filter((l) => l !== '');
}

describe('molt completion', () => {
  it('completes verbs, sub-verbs, flags and flag values in real bash', async () => {
    const bash = await script('bash');
    assert.match(bash, /^complete -o default -F _molt molt$/m);
    assert.deepEqual(await bashComplete(bash, ['rol']), ['rollout']);
    assert.deepEqual(await bashComplete(bash, ['rollout', 'p']), ['pause']);
    assert.deepEqual(await bashComplete(bash, ['cluster', 'kubernetes', 'f']), ['finalize']);
    assert.deepEqual(await bashComplete(bash, ['cluster', 'kubernetes', 'upgrade', '--dr']), [
      '--dry-run',
    ]);
    assert.deepEqual(await bashComplete(bash, ['rollout', 'list', '--end']), ['--endpoint']);
    // `molt rollout list` has a wide table too: the choices come from the command tree.
    assert.deepEqual(await bashComplete(bash, ['rollout', 'list', '-o', '']), [
      'table',
      'json',
      'yaml',
      'wide',
    ]);
    // A flag's value is not taken for a verb: `--ca lab` stays under `molt rollout list`.
    assert.deepEqual(await bashComplete(bash, ['rollout', 'list', '--ca', 'lab', '--ti']), [
      '--timeout',
    ]);
    // The processes complete too, from their verbs down to their flags' values.
    assert.deepEqual(await bashComplete(bash, ['lab', 'pu']), ['publish']);
    assert.deepEqual(await bashComplete(bash, ['lab', 'up', '--network', 'n']), ['netns']);
    assert.deepEqual(await bashComplete(bash, ['help', 'op']), ['operator']);
    assert.deepEqual(await bashComplete(bash, ['completion', 'z']), ['zsh']);
    // Recovery with Kubernetes down (docs/adr/0012 §6).
    assert.deepEqual(await bashComplete(bash, ['node', 'service', 'st']), ['start', 'stop']);
    assert.deepEqual(await bashComplete(bash, ['node', 'etcd', 'f']), ['forfeit-leadership']);
    assert.deepEqual(await bashComplete(bash, ['node', 'logs', '--ser']), ['--service']);
    assert.deepEqual(await bashComplete(bash, ['cluster', 'recover', '--etcd']), [
      '--etcd-snapshot',
    ]);
  });

  it('asks the operator for rollout ids and machine names where a command takes one', async () => {
    const bash = await script('bash');
    // \`molt __complete KIND\` is what the script runs (its answers: rollout.test.ts); here a
    // stand-in on PATH answers, so this checks where the script asks and what it does with them.
    const dir = await mkdtemp(join(tmpdir(), 'molt-complete-'));
    await writeFile(
      join(dir, 'molt'),
      '#!/bin/sh\ncase "$2" in rollouts) echo workers-1.1.0; echo cp-1.0.9 ;; machines) echo w-1; echo w-2 ;; esac\n',
      { mode: 0o755 },
    );
    try {
      assert.deepEqual(await bashComplete(bash, ['rollout', 'pause', 'w'], dir), ['workers-1.1.0']);
      assert.deepEqual(await bashComplete(bash, ['images', 'rollback', 'c'], dir), ['cp-1.0.9']);
      assert.deepEqual(await bashComplete(bash, ['machine', 'hold', 'w-'], dir), ['w-1', 'w-2']);
      assert.deepEqual(await bashComplete(bash, ['node', 'status', 'w-2'], dir), ['w-2']);
      assert.deepEqual(await bashComplete(bash, ['machine', 'register', 'w'], dir), []);
      assert.deepEqual(
        await bashComplete(bash, ['rollout', 'li'], dir),
        ['list'],
        'verbs stay static',
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('gives zsh the same tables and a compdef', async () => {
    const zsh = await script('zsh');
    assert.match(zsh, /^compdef _molt molt$/m);
    assert.match(zsh, /^ {4}'molt rollout'\) printf '%s\\n' list status /m);
    if (!(await has('zsh'))) return;
    const { stdout } = await run('zsh', [
      '-f',
      '-c',
      `${zsh.replace(/^compdef .*$/m, '')}
_molt_path rollout list --ca x ''`,
    ]);
    assert.equal(stdout, 'molt rollout list\n');
  });

  it('completes in fish, where this machine has it', async (t) => {
    if (!(await has('fish'))) {
      t.skip('no fish here');
      return;
    }
    const fish = await script('fish');
    const { stdout } = await run('fish', ['--no-config', '-c', `${fish}\ncomplete -C 'molt rol'`]);
    assert.match(stdout, /^rollout\trollouts on the operator/m);
  });

  it('refuses a shell it does not know', async () => {
    const io = memoryIo();
    assert.equal(await main(['completion', 'tcsh'], io), 1);
    assert.match(io.stderr(), /^error MOLT_BAD_FLAG: .*tcsh.*Allowed choices are bash, zsh, fish/);
  });
});
