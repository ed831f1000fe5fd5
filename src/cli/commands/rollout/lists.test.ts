// SPDX-License-Identifier: Apache-2.0
// Issue 17 §2 on the fixture operator: rollouts by unique prefix, `-o wide`, label selectors and
// `--watch` (ended by ctrl-C with exit 0), in-process over mutual TLS.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startCliOperator, type CliOperator } from '../../../testkit/cli-operator.ts';
import { eventually } from '../../../platform/process/managed-process.ts';
import { memoryIo } from '../../io.ts';
import { main } from '../../main.ts';

describe('molt rollout and machine lists', () => {
  let op: CliOperator;
  before(async () => {
    op = await startCliOperator('lists-cli');
  });
  after(() => op.close());

  const as = (who: string): string[] => [
    ...['--endpoint', op.api.url, '--ca', op.files['ca'] ?? ''],
    ...['--cert', op.files[`${who}.pem`] ?? '', '--key', op.files[`${who}.key`] ?? ''],
  ];
  async function molt(args: string[]) {
    const io = memoryIo();
    const code = await main(args, io);
    return { code, stdout: io.stdout(), stderr: io.stderr() };
  }

  it('takes a unique prefix of a rollout id for status and actions', async () => {
    const status = await molt(['rollout', 'status', 'workers-1.1', ...as('node')]);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /^rollout: +workers-1\.1\.0$/m);
    const approve = await molt(['rollout', 'approve', 'cp-1.1', ...as('operator')]);
    assert.equal(approve.stdout, 'rollout cp-1.1.0: now Active\n');
  });

  it('refuses an ambiguous prefix, listing the candidates, and an unknown one with near matches', async () => {
    const ambiguous = await molt(['rollout', 'pause', 'cp-1.', ...as('operator')]);
    assert.equal(ambiguous.code, 1);
    assert.match(
      ambiguous.stderr,
      /^error MOLT_AMBIGUOUS_ID: rollout cp-1\. is ambiguous: 2 rollouts start with it: cp-1\.0\.9, cp-1\.1\.0\n/,
    );
    const unknown = await molt(['rollout', 'status', 'workers-1.2.0', ...as('node')]);
    assert.match(
      unknown.stderr,
      /^error MOLT_ROLLOUT_NOT_FOUND: no rollout is workers-1\.2\.0 or starts with it; did you mean workers-1\.1\.0, workers-1\.0\.1\?/,
    );
  });

  it('prints more columns with -o wide', async () => {
    const rollouts = await molt(['rollout', 'list', '-o', 'wide', ...as('node')]);
    assert.match(
      rollouts.stdout,
      /^ROLLOUT +POOL +TARGET +STATE +DONE +IN FLIGHT +FAILED +CREATED +PENDING +QUARANTINED +FROM +PATH +DIGEST +NOTE$/m,
    );
    assert.match(rollouts.stdout, /^cp-1\.0\.9 .* 1\.0\.8 +- +sha256:1090{61}/m);
    const machines = await molt(['machine', 'list', '-o', 'wide', ...as('node')]);
    assert.match(machines.stdout, /^MACHINE +POOL +ROLE +CLUSTER +VERSION +STATE +SLOTS +LAST/m);
    assert.match(
      machines.stdout,
      /^w-1 +workers .* A:1\.0\.0\* B:empty .* https:\/\/w-1\.lab:7443 +zone=a/m,
    );
    const blocked = await molt(['releases', 'blocked', '-o', 'wide', ...as('node')]);
    assert.equal(blocked.stdout, 'no release is blocked\n');
    const refused = await molt(['rollout', 'status', 'cp-1.0.9', '-o', 'wide', ...as('node')]);
    assert.match(
      refused.stderr,
      /MOLT_BAD_FLAG: option '-o, --output <format>' argument 'wide' is invalid/,
    );
  });

  it('selects machines by label', async () => {
    const reg = await molt([
      ...['machine', 'register', 'w-9', '--agent', 'https://10.0.0.9:7443', '--pool', 'workers'],
      ...['--label', 'zone=b', '--label', 'disk=ssd', ...as('operator')],
    ]);
    assert.equal(reg.code, 0, reg.stderr);
    const ids = async (selector: string): Promise<string[]> => {
      const r = await molt(['machine', 'list', '-l', selector, '-o', 'json', ...as('node')]);
      assert.equal(r.code, 0, r.stderr);
      return (JSON.parse(r.stdout) as { id: string }[]).map((m) => m.id);
    };
    assert.deepEqual(await ids('zone=b'), ['w-9']);
    assert.deepEqual(await ids('zone!=b,zone'), ['cp-1', 'cp-2', 'w-1', 'w-2', 'w-3', 'w-4']);
    assert.deepEqual(await ids('disk'), ['w-9']);
    assert.deepEqual((await ids('!disk')).length, 6);
    const bad = await molt(['machine', 'list', '-l', 'zone=a=b', ...as('node')]);
    assert.match(bad.stderr, /^error MOLT_BAD_FLAG: -l zone=a=b: "a=b" is not a label value/);
    const role = await molt(['machine', 'list', '-l', 'role=worker', ...as('node')]);
    assert.equal(role.code, 0);
    assert.match(
      role.stderr,
      /^no machine of the 7 matches: no machine has label role \(labels here: disk, zone\); role is a field, not a label: use --role\n$/,
    );
    const workers = await molt([
      'machine',
      'list',
      '--role',
      'worker',
      '-o',
      'json',
      ...as('node'),
    ]);
    assert.deepEqual(
      (JSON.parse(workers.stdout) as { id: string }[]).map((m) => m.id),
      ['w-1', 'w-2', 'w-3', 'w-4', 'w-9'],
    );
    const pool = await molt(['machine', 'list', '--pool', 'worker', ...as('node')]);
    assert.match(
      pool.stderr,
      /no machine has pool worker \(pools here: .*\); did you mean workers\?\n$/,
    );
    await molt(['machine', 'deregister', 'w-9', ...as('operator')]);
  });

  it('watches the rollouts, printing again on a change, until ctrl-C ends it with exit 0', async () => {
    const io = memoryIo();
    const running = main(['rollout', 'list', '--watch', ...as('node')], io);
    await eventually(() => {
      assert.match(io.stdout(), /^workers-1\.1\.0 .* Active +1\/4/m);
      return Promise.resolve();
    });
    await op.store.updateRollout('workers-1.1.0', (r) => ({ ...r, state: 'Paused' }));
    await eventually(
      () => {
        assert.match(io.stdout(), /\n\nROLLOUT .*\n(.*\n)*workers-1\.1\.0 .* Paused/);
        return Promise.resolve();
      },
      { timeoutMs: 6000 },
    );
    io.interrupt();
    assert.equal(await running, 0, io.stderr());
    assert.equal(io.stdout().split('ROLLOUT').length, 3, 'printed twice: once, and on the change');
    await op.store.updateRollout('workers-1.1.0', (r) => ({ ...r, state: 'Active' }));
  });

  it('watches machines as JSON lines', async () => {
    const io = memoryIo();
    const running = main(
      ['machine', 'list', '-w', '-o', 'json', '-l', 'zone=a', ...as('node')],
      io,
    );
    await eventually(() => {
      assert.equal(io.stdout().split('\n').length, 2);
      return Promise.resolve();
    });
    io.interrupt();
    assert.equal(await running, 0, io.stderr());
    assert.equal((JSON.parse(io.stdout()) as unknown[]).length, 6);
  });
});
