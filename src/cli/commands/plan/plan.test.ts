// SPDX-License-Identifier: Apache-2.0
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { scratchDir } from '../../../testkit/scratch-dir.ts';
import { memoryIo } from '../../io.ts';
import { main } from '../../main.ts';
import type { PlanView } from './view.ts';

const fixture = (name: string): string =>
  fileURLToPath(new URL(`./testdata/${name}`, import.meta.url));
const at = '2026-11-23T10:00:00Z';

async function run(args: string[]) {
  const io = memoryIo();
  const code = await main(args, io);
  return { code, stdout: io.stdout(), stderr: io.stderr() };
}

async function planView(name: string, ...extra: string[]): Promise<PlanView> {
  const r = await run(['plan', '--fleet', fixture(name), '--at', at, '-o', 'json', ...extra]);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as PlanView;
}

/** `machine@start` in schedule order, start relative to the plan in minutes. */
const timeline = (v: PlanView): string[] =>
  v.schedule.map((s) => `${s.machine}@${(Date.parse(s.start) - Date.parse(v.at)) / 60_000}`);

describe('molt plan: control plane first, then a canary worker, then the rest', () => {
  it('starts one control-plane machine now and says why the others wait', async () => {
    const v = await planView('six.yaml');
    assert.equal(v.at, at);
    const now = v.decisions.map((d) => `${d.machine} ${d.action} ${d.reason?.code ?? '-'}`);
    assert.deepEqual(now.sort(), [
      'cp-1 start -',
      'cp-2 wait ControlPlaneBusy',
      'cp-3 wait ControlPlaneBusy',
      'w-1 wait ControlPlaneFirst',
      'w-2 wait ControlPlaneFirst',
      'w-3 wait ControlPlaneFirst',
    ]);
  });

  it('predicts the control plane one at a time, the canary, its soak, then two workers together', async () => {
    const v = await planView('six.yaml');
    assert.deepEqual(timeline(v), ['cp-1@0', 'cp-3@10', 'cp-2@20', 'w-3@30', 'w-2@50', 'w-1@50']);
    assert.deepEqual(
      v.schedule.map((s) => s.batch),
      [1, 1, 1, 0, 1, 1],
    );
    assert.equal(v.schedule[0]?.finish, '2026-11-23T10:10:00Z');
    assert.equal(v.end, '2026-11-23T11:00:00Z');
    assert.deepEqual(v.waiting, []);
    assert.deepEqual(
      v.rollouts.map((r) => [r.rollout, r.verdict, r.predicted]),
      [
        ['cp-1.1.0', 'continue', 'complete'],
        ['workers-1.1.0', 'continue', 'complete'],
      ],
    );
  });

  it('scales the schedule with --upgrade-minutes', async () => {
    const v = await planView('six.yaml', '--upgrade-minutes', '30');
    assert.deepEqual(timeline(v), ['cp-1@0', 'cp-3@30', 'cp-2@60', 'w-3@90', 'w-2@130', 'w-1@130']);
  });

  it('prints tables for people, with times relative to the plan', async () => {
    const r = await run(['plan', '--fleet', fixture('six.yaml'), '--at', at]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    const lines = r.stdout.split('\n');
    assert.match(lines[0] ?? '', /^plan of .*six\.yaml at 2026-11-23T10:00:00Z$/);
    assert.ok(lines.includes('now:'));
    assert.match(r.stdout, /\ncp-1\.1\.0 +cp-1 +start +1\n/);
    assert.match(
      r.stdout,
      /\nworkers-1\.1\.0 +w-3 +wait +canary +ControlPlaneFirst: control plane first: 3 control-plane machines of cluster lab not upgraded yet\n/,
    );
    assert.match(r.stdout, /\npredicted schedule \(each upgrade 10m, next 7d\):\n/);
    assert.match(r.stdout, /\nworkers-1\.1\.0 +w-3 +canary +\+30m +\+40m +2026-11-23T10:30:00Z\n/);
    assert.match(r.stdout, /\nworkers-1\.1\.0 +w-1 +1 +\+50m +\+1h +2026-11-23T10:50:00Z\n/);
    assert.match(r.stdout, /\nlast finish \+1h \(2026-11-23T11:00:00Z\)\n/);
  });

  it('prints the same view as YAML', async () => {
    const r = await run(['plan', '--fleet', fixture('six.yaml'), '--at', at, '-o', 'yaml']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(parse(r.stdout), await planView('six.yaml'));
  });
});

describe('molt plan: a closed window', () => {
  it('waits with WindowClosed and the opening time, then predicts starts inside the window', async () => {
    const v = await planView('window.yaml');
    for (const d of v.decisions) {
      assert.equal(d.action, 'wait');
      assert.equal(d.reason?.code, 'WindowClosed');
      assert.match(d.reason.message, /opens 2026-11-24T01:00:00(\.000)?Z \(Europe\/Berlin 02:00\)/);
      assert.equal(d.notBefore, '2026-11-24T01:00:00Z');
    }
    // The rate limit (one an hour) spaces the two starts inside the window.
    assert.deepEqual(timeline(v), ['w-1@900', 'w-2@960']);
  });

  it('plans the documented example fleet (docs/examples/fleet.yaml): canary soak, rate and zones', async () => {
    const doc = (f: string): string =>
      fileURLToPath(new URL(`../../../../docs/examples/${f}`, import.meta.url));
    const example = doc('fleet.yaml');
    const alone = await run(['plan', '--fleet', example, '--at', at, '-o', 'json']);
    assert.equal(alone.code, 0, alone.stderr);
    assert.deepEqual(
      (JSON.parse(alone.stdout) as PlanView).decisions,
      [],
      'the fleet file says what should be: no rollout runs in it',
    );
    const state = ['--state', doc('fleet-state.yaml')];
    const r = await run(['plan', '--fleet', example, ...state, '--at', at, '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const v = JSON.parse(r.stdout) as PlanView;
    // Control plane one at a time now; workers in the nightly window: the canary, its 30m soak,
    // then at most 2 an hour, zone a before zone b.
    assert.deepEqual(timeline(v), [
      'cp-1@0',
      'cp-3@10',
      'cp-2@20',
      'w-3@840',
      'w-2@880',
      'w-1@900',
      'w-6@940',
      'w-5@960',
      'w-4@1000',
    ]);
  });

  it('refuses a state file naming what the fleet file does not define, at its line', async () => {
    const fleet = fixture('window.yaml');
    const dir = await scratchDir('plan-state');
    const bad = join(dir, 'state.yaml');
    await writeFile(
      bad,
      'machines:\n  - {id: w-1, version: 1.0.0}\n  - {id: w-9, version: 1.0.0}\n',
    );
    const unknown = await run(['plan', '--fleet', fleet, '--state', bad]);
    assert.equal(unknown.code, 1);
    assert.match(
      unknown.stderr,
      /^error MOLT_UNKNOWN_MACHINE: .*state\.yaml:3:\d+: machines\[1\]\.id: machine "w-9" is not in the fleet file\n/,
    );
    await writeFile(bad, 'machines: []\nrollout: []\n');
    const typo = await run(['plan', '--fleet', fleet, '--state', bad]);
    assert.match(
      typo.stderr,
      /^error MOLT_FLEET_INVALID: .*state\.yaml:2:1: unknown field "rollout"/,
    );
    const missing = await run(['plan', '--fleet', fleet, '--state', join(dir, 'nope.yaml')]);
    assert.match(missing.stderr, /^error MOLT_BAD_FLAG: --state .*nope\.yaml: no such file\n/);
    const live = await run(['plan', '--state', bad]);
    assert.match(live.stderr, /--state needs --fleet/);
  });

  it('shows the wait in the table as relative time', async () => {
    const r = await run(['plan', '--fleet', fixture('window.yaml'), '--at', at]);
    assert.match(r.stdout, /\nr1 +w-1 +wait +1 +\+15h +WindowClosed: window closed; opens /);
  });

  it('lists the machines that do not start within a short horizon, and why', async () => {
    const v = await planView('window.yaml', '--horizon', '12h');
    assert.deepEqual(v.schedule, []);
    assert.deepEqual(
      v.waiting.map((w) => [w.machine, w.reason.code, w.notBefore]),
      [
        ['w-1', 'WindowClosed', '2026-11-24T01:00:00Z'],
        ['w-2', 'WindowClosed', '2026-11-24T01:00:00Z'],
      ],
    );
    const r = await run([
      'plan',
      '--fleet',
      fixture('window.yaml'),
      '--at',
      at,
      '--horizon',
      '12h',
    ]);
    assert.match(r.stdout, /no machine starts within the horizon\n/);
    assert.match(r.stdout, /\nnot started within 12h:\n/);
  });
});

describe('molt plan: user errors get a code and a hint, never a stack trace', () => {
  const failsWith = async (args: string[], stderr: RegExp): Promise<void> => {
    const r = await run(['plan', ...args]);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, stderr);
    assert.match(r.stderr, /\n {2}hint: /);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
  };

  it('names an unknown pool with its line and column', async () => {
    await failsWith(
      ['--fleet', fixture('unknown-pool.yaml')],
      /^error MOLT_UNKNOWN_POOL: .*unknown-pool\.yaml:5:24: machines\[1\]\.pool: unknown pool "gpu" \(known pools: workers\)\n/,
    );
  });

  it('names an invalid policy where it is in the file', async () => {
    const dir = await scratchDir('plan');
    const file = join(dir, 'fleet.yaml');
    const text = [
      'pools:',
      '  - name: p',
      '    policies:',
      '      - window: {windows: [{cron: "0 2 * * *", duration: 1h, timeZone: Mars/Olympus}]}',
      'machines: [{id: m1, pool: p}]',
      '',
    ].join('\n');
    await writeFile(file, text);
    await failsWith(
      ['--fleet', file],
      /^error MOLT_POLICY_INVALID: .*fleet\.yaml:4:72: pools\[0\]\.policies\[0\]\.window\.windows\[0\]\.timeZone: unknown time zone 'Mars\/Olympus'\n/,
    );
  });

  it('refuses a missing file', async () => {
    await failsWith(
      ['--fleet', fixture('nope.yaml')],
      /^error MOLT_BAD_FLAG: --fleet .*nope\.yaml: no such file\n/,
    );
  });

  it('asks the live operator without --fleet, and says when none is configured', async () => {
    await failsWith([], /^error MOLT_NO_ENDPOINT: no operator is configured\n/);
  });

  it('refuses the offline flags without --fleet', async () => {
    await failsWith(
      ['--at', at, '--horizon', '1d'],
      /^error MOLT_BAD_FLAG: --at, --horizon need --fleet \(a prediction of the fleet file's plan\)\n {2}hint: the live operator plans now/,
    );
    await failsWith(['--at', 'yesterday'], /^error MOLT_BAD_FLAG: --at needs --fleet /);
  });

  it('refuses a time without a zone', async () => {
    await failsWith(
      ['--fleet', fixture('six.yaml'), '--at', '2026-11-23 10:00'],
      /^error MOLT_BAD_FLAG: --at must be an ISO 8601 time with a zone/,
    );
  });

  it('refuses a bad horizon and upgrade time', async () => {
    await failsWith(
      ['--fleet', fixture('six.yaml'), '--horizon', 'soon'],
      /--horizon must be a duration/,
    );
    await failsWith(
      ['--fleet', fixture('six.yaml'), '--upgrade-minutes', '0'],
      /--upgrade-minutes must be more than 0/,
    );
  });
});

describe('molt --help', () => {
  it('lists plan', async () => {
    const r = await run(['--help']);
    assert.equal(r.code, 0);
    assert.match(
      r.stdout,
      /\n {2}plan \[options\] +what the operator does next and why each machine waits/,
    );
  });
});
