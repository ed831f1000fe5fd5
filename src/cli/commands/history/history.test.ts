// SPDX-License-Identifier: Apache-2.0
// `molt history`, `molt plan` against the live operator, and `molt node NAME` resolved through the
// operator's inventory, in-process against the fixture operator over mutual TLS.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startCliOperator, type CliOperator } from '../../../testkit/cli-operator.ts';
import { eventually } from '../../../platform/process/managed-process.ts';
import type { HistoryEventView, PlanView } from '../../../protocol/index.ts';
import { memoryIo } from '../../io.ts';
import { main } from '../../main.ts';

describe('molt history, live plan and machines by name', () => {
  let op: CliOperator;
  before(async () => {
    op = await startCliOperator('history-cli');
    await op.store.appendHistory({
      at: Date.parse('2026-11-24T09:58:00Z'),
      kind: 'rollout-state',
      rollout: 'cp-1.0.9',
      message: 'rollout cp-1.0.9 paused by alice: freeze',
      data: { state: 'Paused', by: 'alice', action: 'pause' },
    });
  });
  after(() => op.close());

  const as = (who: string): string[] => [
    ...['--endpoint', op.api.url, '--ca', op.files['ca'] ?? ''],
    ...['--cert', op.files[`${who}.pem`] ?? '', '--key', op.files[`${who}.key`] ?? ''],
  ];
  async function molt(args: string[], env: Record<string, string> = {}) {
    const io = memoryIo(env);
    const code = await main(args, io);
    return { code, stdout: io.stdout(), stderr: io.stderr() };
  }

  it('prints the history with who did what, filtered by rollout prefix and machine', async () => {
    const all = await molt(['history', ...as('node')]);
    assert.equal(all.code, 0, all.stderr);
    assert.match(all.stdout, /^TIME +KIND +ROLLOUT +MACHINE +BY +MESSAGE$/m);
    assert.match(
      all.stdout,
      /^2026-11-24T09:55:00Z \([\dhdms]+ ago\) +machine-start +workers-1\.1\.0 +w-2 +operator +w-2: upgrade to 1\.1\.0 accepted/m,
      'UTC to the second, and how long ago',
    );
    assert.match(
      all.stdout,
      /^2026-11-24T09:58:00Z \([\dhdms]+ ago\) +rollout-state +cp-1\.0\.9 +- +alice +rollout/m,
    );
    const rollout = await molt([
      'history',
      '--rollout',
      'workers-1.1',
      '-o',
      'json',
      ...as('node'),
    ]);
    const events = JSON.parse(rollout.stdout) as HistoryEventView[];
    assert.deepEqual(
      events.map((e) => e.kind),
      ['rollout-created', 'machine-start'],
    );
    const machine = await molt(['history', '--machine', 'w-2', '-o', 'json', ...as('node')]);
    assert.deepEqual(
      (JSON.parse(machine.stdout) as HistoryEventView[]).map((e) => e.machine),
      ['w-2'],
    );
    const tail = await molt(['history', '--tail', '1', '-o', 'json', ...as('node')]);
    assert.deepEqual(
      (JSON.parse(tail.stdout) as HistoryEventView[]).map((e) => e.rollout),
      ['cp-1.0.9'],
    );
  });

  it('follows new events until ctrl-C, which ends it with exit 0', async () => {
    const io = memoryIo();
    const running = main(['history', '--follow', '--tail', '0', ...as('node')], io);
    await eventually(() => {
      assert.match(io.stdout(), /^TIME +KIND/);
      return Promise.resolve();
    });
    await op.store.appendHistory({
      at: Date.parse('2026-11-24T10:00:00Z'),
      kind: 'decision',
      machine: 'w-3',
      message: 'machine w-3 held until 2026-11-24T12:00:00.000Z by bob: disk',
      data: { action: 'hold', by: 'bob' },
    });
    await eventually(() => {
      assert.match(io.stdout(), /\n2026-11-24T10:00:00Z +decision +- +w-3 +bob +machine w-3 held/);
      return Promise.resolve();
    });
    io.interrupt();
    assert.equal(await running, 0, io.stderr());
    assert.doesNotMatch(io.stdout(), /machine-start/, '--tail 0: no older event');
  });

  it('asks the live operator for its plan: what starts next and why each machine waits', async () => {
    const table = await molt(['plan', ...as('node')]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(
      table.stdout,
      /^plan of the operator at https:\/\/127\.0\.0\.1:\d+ at 2026-11-24T10:00:00/,
    );
    assert.match(table.stdout, /\(leader; 4 of 6 machines observed/);
    assert.match(table.stdout, /^workers-1\.1\.0 +workers +1\.1\.0 +Active +continue/m);
    assert.match(table.stdout, /^next: nothing starts now; 4 waiting \(why: below\)$/m);
    assert.doesNotMatch(table.stdout, /workers-1\.0\.1/, 'ended rollouts are history, not plan');
    assert.match(table.stdout, /^workers-1\.1\.0 +w-3 +wait +\d+ +ConcurrencyFull: /m);
    const json = await molt(['plan', '-o', 'json', ...as('node')]);
    const view = JSON.parse(json.stdout) as PlanView;
    const w3 = view.decisions.find((d) => d.machine === 'w-3' && d.rollout === 'workers-1.1.0');
    assert.equal(w3?.refusals?.[0]?.code, 'ConcurrencyFull', 'asked with explain');
  });

  it('finds a machine named on the command line in the operator’s inventory', async () => {
    const config = join(op.dir, 'by-name.yaml');
    const set = await molt(
      [
        ...[
          'config',
          'set-context',
          'fixture',
          '--operator',
          op.api.url,
          '--ca',
          op.files['ca'] ?? '',
        ],
        ...['--cert', op.files['node.pem'] ?? '', '--key', op.files['node.key'] ?? ''],
        ...['--agent-port', '9'],
      ],
      { MOLT_CONFIG: config },
    );
    assert.equal(set.code, 0, set.stderr);
    const status = await molt(['node', 'status', 'w-3', '--timeout', '1000'], {
      MOLT_CONFIG: config,
    });
    assert.equal(status.code, 1);
    // The fixture's agents do not run: reaching w-3's inventory host at the context's port shows
    // the name was resolved.
    assert.match(
      status.stderr,
      /^error MOLT_AGENT_UNREACHABLE: cannot reach the agent at https:\/\/w-3\.lab:9/,
    );
    const typo = await molt(['node', 'status', 'w3'], { MOLT_CONFIG: config });
    assert.match(
      typo.stderr,
      /^error MOLT_UNKNOWN_MACHINE: the operator at https:\/\/127\.0\.0\.1:\d+ manages no machine w3; did you mean w-3\?\n/,
    );
    const both = await molt(['node', 'status', 'w-3', '--endpoint', 'https://x:1'], {
      MOLT_CONFIG: config,
    });
    assert.match(both.stderr, /^error MOLT_BAD_FLAG: give machine w-3 or --endpoint, not both/);
    const noOperator = await molt(['node', 'events', 'w-3']);
    assert.match(
      noOperator.stderr,
      /^error MOLT_NO_ENDPOINT: no operator is configured to find machine w-3 in\n.*--endpoint https:\/\/HOST:PORT$/m,
    );
  });

  it('labels an image rollout’s workload changes as workload-start and workload-result, not machine-…', async () => {
    const unit = 'Deployment/shop/web';
    for (const [kind, message] of [
      ['machine-start', `${unit}: moving web → acme/web:2@sha256:…`],
      ['machine-result', `${unit}: Succeeded`],
    ] as const)
      await op.store.appendHistory({
        at: Date.parse('2026-11-24T10:01:00Z'),
        kind,
        machine: unit,
        message,
      });
    const table = await molt(['history', '--machine', unit, ...as('node')]);
    assert.deepEqual(
      table.stdout
        .split('\n')
        .slice(1, 3)
        .map((l) => l.split(/ {2,}/)[1]),
      ['workload-start', 'workload-result'],
    );
    const json = await molt(['history', '--machine', unit, '-o', 'json', ...as('node')]);
    assert.deepEqual(
      (JSON.parse(json.stdout) as HistoryEventView[]).map((e) => e.kind),
      ['machine-start', 'machine-result'],
      'the API’s kind, which notification sinks filter on, stays',
    );
  });
});
