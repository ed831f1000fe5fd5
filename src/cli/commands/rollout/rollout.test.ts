// SPDX-License-Identifier: Apache-2.0
// `molt rollout …` and `molt machine …` in-process (memoryIo) against a real operator API over
// mutual TLS, on the in-memory store.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { apiFixture, fixtureRollouts } from '../../../testkit/operator-api-fixture.ts';
import { createOperatorApi, type OperatorApi } from '../../../operator/api/server.ts';
import type { MemoryOperatorStore } from '../../../operator/adapters/memory-store/operator-store.ts';
import { eventually, tempDir } from '../../../platform/process/managed-process.ts';
import { freePort } from '../../../platform/process/free-port.ts';
import { memoryIo } from '../../io.ts';
import { main } from '../../main.ts';
import { createCa, issueCertificate } from '../../../platform/pki/certificates.ts';

describe('molt rollout and molt machine', () => {
  const files: Record<string, string> = {};
  let dir: { path: string; remove: () => Promise<void> };
  let api: OperatorApi;
  let store: MemoryOperatorStore;

  before(async () => {
    dir = await tempDir('rollout-cli');
    const ca = await createCa();
    const pairs = {
      operator: await issueCertificate({ ca, role: 'operator', name: 'alice' }),
      node: await issueCertificate({ ca, role: 'node', name: 'w-9' }),
    };
    for (const [name, pair] of Object.entries(pairs)) {
      files[`${name}.pem`] = join(dir.path, `${name}.pem`);
      files[`${name}.key`] = join(dir.path, `${name}.key`);
      await writeFile(join(dir.path, `${name}.pem`), pair.cert);
      await writeFile(join(dir.path, `${name}.key`), pair.key, { mode: 0o600 });
    }
    files['ca'] = join(dir.path, 'ca.pem');
    await writeFile(files['ca'], ca.cert);
    const f = await apiFixture();
    store = f.store;
    const server = await issueCertificate({ ca, role: 'node', name: 'operator-1' });
    api = await createOperatorApi({ deps: f.deps, tls: { ca: ca.cert, ...server } });
  });
  after(async () => {
    await api.close();
    await dir.remove();
  });

  const as = (who: string) => [
    '--endpoint',
    api.url,
    '--ca',
    files['ca']!,
    '--cert',
    files[`${who}.pem`]!,
    '--key',
    files[`${who}.key`]!,
  ];

  async function molt(args: string[], env: Record<string, string> = {}) {
    const io = memoryIo(env);
    const code = await main(args, io);
    return { code, stdout: io.stdout(), stderr: io.stderr() };
  }

  it('lists rollouts as a table and as JSON', async () => {
    const table = await molt(['rollout', 'list', ...as('node')]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^ROLLOUT +POOL +TARGET +STATE +DONE +IN FLIGHT +FAILED +CREATED$/m);
    assert.match(
      table.stdout,
      /^workers-1\.1\.0 +workers +1\.1\.0 \(110000000000\) +Active +1\/4 +1 +0 /m,
    );
    const json = await molt(['rollout', 'list', '-o', 'json', ...as('node')]);
    assert.equal((JSON.parse(json.stdout) as unknown[]).length, 4);
  });

  it('shows one rollout with its machines, taking the endpoint and certificates from the environment', async () => {
    const r = await molt(['rollout', 'status', 'workers-1.1.0'], {
      MOLT_OPERATOR: api.url,
      MOLT_CA: files['ca']!,
      MOLT_CERT: files['node.pem']!,
      MOLT_KEY: files['node.key']!,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^state: +Active$/m);
    assert.match(r.stdout, /^progress: 1\/4 machines done \(1 in flight, 0 failed, 2 pending\)$/m);
    assert.match(r.stdout, /^w-3 +Pending +wait +ConcurrencyFull: /m);
  });

  it('reports an unknown rollout with its code', async () => {
    const r = await molt(['rollout', 'status', 'nope', ...as('node')]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /MOLT_ROLLOUT_NOT_FOUND/);
  });

  it('pauses and resumes for an operator, and refuses a node certificate', async () => {
    const refused = await molt(['rollout', 'pause', 'workers-1.1.0', ...as('node')]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /MOLT_FORBIDDEN: w-9 \(role node\) may not/);
    const paused = await molt([
      'rollout',
      'pause',
      'workers-1.1.0',
      '--reason',
      'freeze',
      ...as('operator'),
    ]);
    assert.equal(paused.code, 0, paused.stderr);
    assert.equal(paused.stdout, 'rollout workers-1.1.0: now Paused\n');
    const again = await molt(['rollout', 'pause', 'workers-1.1.0', ...as('operator')]);
    assert.equal(again.stdout, 'rollout workers-1.1.0: already Paused\n');
    const status = await molt(['rollout', 'status', 'workers-1.1.0', ...as('node')]);
    assert.match(
      status.stdout,
      /^state: {4}Paused\nwhy: {6}paused by alice: freeze$/m,
      'who paused it and why',
    );
    const resumed = await molt([
      'rollout',
      'resume',
      'workers-1.1.0',
      '-o',
      'json',
      ...as('operator'),
    ]);
    const body = JSON.parse(resumed.stdout) as { changed: boolean; rollout: { state: string } };
    assert.deepEqual([body.changed, body.rollout.state], [true, 'Active']);
    const halted = await molt(['rollout', 'resume', 'cp-1.0.9', ...as('operator')]);
    assert.match(halted.stderr, /MOLT_ROLLOUT_STATE/);
    assert.match(halted.stderr, /hint: .*--force/);
  });

  it('follows a rollout: its history, progress lines, until it completes — its last event included', async () => {
    const io = memoryIo();
    const running = main(['rollout', 'status', 'workers-1.1.0', '--follow', ...as('node')], io);
    await eventually(() => {
      assert.match(io.stdout(), /machine-start/);
      return Promise.resolve();
    });
    await store.updateRollout('workers-1.1.0', (r) => ({
      ...r,
      machines: { ...r.machines, 'w-2': { phase: 'Succeeded', startedAt: 1, finishedAt: 2 } },
    }));
    await store.appendHistory({
      at: Date.now(),
      kind: 'machine-result',
      rollout: 'workers-1.1.0',
      machine: 'w-2',
      message: 'w-2: Succeeded',
    });
    await eventually(() => {
      assert.match(
        io.stdout(),
        /^progress: 2\/4 machines done \(0 in flight, 0 failed, 2 pending\) — Active$/m,
      );
      return Promise.resolve();
    });
    // The operator writes the new state, then its event: a follower that reads the final state on
    // the event before (here w-3's result) still waits for the completion's own line.
    await store.updateRollout('workers-1.1.0', (r) => ({ ...r, state: 'Completed' }));
    await store.appendHistory({
      at: Date.now(),
      kind: 'machine-result',
      rollout: 'workers-1.1.0',
      machine: 'w-3',
      message: 'w-3: Succeeded',
    });
    await Promise.race([running, sleep(1_000)]);
    await store.appendHistory({
      at: Date.now(),
      kind: 'rollout-state',
      rollout: 'workers-1.1.0',
      message: 'rollout workers-1.1.0 completed',
    });
    assert.equal(await running, 0, io.stderr());
    const out = io.stdout();
    assert.match(
      out.split('\n')[0] ?? '',
      /^rollout workers-1\.1\.0: pool workers to 1\.1\.0 \(Active\)$/,
    );
    assert.match(
      out,
      /^progress: 1\/4 machines done \(1 in flight, 0 failed, 2 pending\) — Active$/m,
    );
    assert.match(out, /machine-start +w-2: upgrade to 1\.1\.0 accepted/);
    assert.match(out, /machine-result +w-2: Succeeded/);
    assert.match(
      out,
      /rollout-state +rollout workers-1\.1\.0 completed\nprogress: .* — Completed\n$/,
    );
    assert.doesNotMatch(out, /cp-1\.1\.0/, 'only this rollout’s history');
  });

  it('ends following a halted rollout at once, with exit 1', async () => {
    const r = await molt(['rollout', 'status', 'cp-1.0.9', '--follow', ...as('node')]);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /— Halted$/m);
  });

  it('lists machines, holds one for a while and releases it', async () => {
    const list = await molt(['machine', 'list', ...as('node')]);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /^MACHINE +POOL +ROLE +VERSION +STATE +HOLD$/m);
    assert.match(list.stdout, /^w-1 +workers +worker +1\.0\.0 +available$/m);
    assert.match(list.stdout, /^w-2 +workers +worker +- +unreachable$/m);
    const held = await molt([
      'machine',
      'hold',
      'w-3',
      '--reason',
      'disk check',
      '--for',
      '2h',
      ...as('operator'),
    ]);
    assert.equal(held.code, 0, held.stderr);
    assert.match(
      held.stdout,
      /^machine w-3: held until 2026-11-24T12:00:00Z \([\dhdms]+ ago\) by alice: disk check$/m,
    );
    assert.match(
      (await molt(['machine', 'list', ...as('node')])).stdout,
      /^w-3 .* until 2026-11-24T12:00:00Z \([\dhdms]+ ago\): disk check$/m,
    );
    // A release says what it lifted; a second one that there was nothing to lift.
    const released = await molt(['machine', 'release', 'w-3', ...as('operator')]);
    assert.match(
      released.stdout,
      /^machine w-3: released the hold by alice \(until 2026-11-24T12:00:00Z \([\dhdms]+ ago\)\): disk check\n$/,
    );
    const again = await molt(['machine', 'release', 'w-3', ...as('operator')]);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout, 'machine w-3: was not held; nothing to release\n');
    const json = await molt(['machine', 'release', 'w-3', '-o', 'json', ...as('operator')]);
    assert.equal((JSON.parse(json.stdout) as { released: unknown }).released, null);
  });

  it('registers a machine with labels, lists it as registered, and deregisters it', async () => {
    const reg = await molt([
      'machine',
      'register',
      'w-9',
      '--agent',
      'https://10.0.0.9:7443',
      '--pool',
      'workers',
      '--label',
      'zone=b',
      '--label',
      'rack=7',
      ...as('operator'),
    ]);
    assert.equal(reg.code, 0, reg.stderr);
    assert.match(
      reg.stdout,
      /machine w-9: registered in pool workers at https:\/\/10\.0\.0\.9:7443/,
    );
    const list = await molt(['machine', 'list', '-o', 'json', ...as('node')]);
    const w9 = (
      JSON.parse(list.stdout) as {
        id: string;
        labels: Record<string, string>;
        registered?: boolean;
      }[]
    ).find((m) => m.id === 'w-9');
    assert.deepEqual([w9?.labels, w9?.registered], [{ zone: 'b', rack: '7' }, true]);
    const badLabel = await molt([
      'machine',
      'register',
      'w-8',
      '--agent',
      'https://x:1',
      '--pool',
      'workers',
      '--label',
      'zone',
      ...as('operator'),
    ]);
    assert.equal(badLabel.code, 1);
    assert.match(badLabel.stderr, /MOLT_BAD_FLAG: --label zone: must be key=value/);
    const gone = await molt(['machine', 'deregister', 'w-9', ...as('operator')]);
    assert.equal(gone.code, 0, gone.stderr);
    assert.match(gone.stdout, /machine w-9: deregistered/);
  });

  it('checks hold flags before calling, and reports the operator’s refusals', async () => {
    const none = await molt(['machine', 'hold', 'w-3', '--reason', 'x', ...as('operator')]);
    assert.match(none.stderr, /MOLT_BAD_FLAG: give exactly one of --for and --until/);
    const noReason = await molt(['machine', 'hold', 'w-3', '--for', '1h', ...as('operator')]);
    assert.match(noReason.stderr, /MOLT_BAD_FLAG: --reason is required/);
    const bad = await molt([
      'machine',
      'hold',
      'w-3',
      '--reason',
      'x',
      '--for',
      'soon',
      ...as('operator'),
    ]);
    assert.match(
      bad.stderr,
      /^error MOLT_BAD_FLAG: --for "soon" is not a duration \(e\.g\. 30m, 2h, 1d\)$/m,
    );
    const unknown = await molt([
      'machine',
      'hold',
      'nope',
      '--reason',
      'x',
      '--for',
      '1h',
      ...as('operator'),
    ]);
    assert.match(unknown.stderr, /MOLT_UNKNOWN_MACHINE/);
  });

  it('blocks, lists and unblocks a release on the operator; an unknown one is refused', async () => {
    const block = await molt([
      ...['releases', 'block', '1.1.0', '--pool', 'workers', '--reason', 'CVE-2026-1'],
      ...as('operator'),
    ]);
    assert.equal(block.code, 0, block.stderr);
    assert.equal(block.stdout, 'release 1.1.0 blocked for pool workers: CVE-2026-1\n');
    const list = await molt(['releases', 'blocked', ...as('node')]);
    assert.match(list.stdout, /^RELEASE +DIGEST +POOL +BY +SINCE +REASON$/m);
    assert.match(
      list.stdout,
      /^1\.1\.0 +110000000000 +workers +alice +2026-11-24T10:00:00Z \([\dhdms]+ ago\) +CVE-2026-1$/m,
    );
    const noReason = await molt(['releases', 'block', '1.1.0', ...as('operator')]);
    assert.match(noReason.stderr, /MOLT_BAD_FLAG: --reason is required/);
    const unknown = await molt(['releases', 'block', '9.9.9', '--reason', 'x', ...as('operator')]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /MOLT_UNKNOWN_RELEASE: no release 9\.9\.9 is known/);
    // The block paused its rollout (as the operator's next scan does): lifting it says so.
    const was = (await store.read()).rollouts.find((r) => r.id === 'workers-1.1.0')?.state;
    await store.updateRollout('workers-1.1.0', (r) => ({ ...r, state: 'Paused' }));
    const unblock = await molt(['releases', 'unblock', '1.1.0', ...as('operator')]);
    assert.equal(
      unblock.stdout,
      'release 1.1.0 unblocked for pool workers (it was blocked by alice: CVE-2026-1)\n' +
        'rollout workers-1.1.0 stays Paused: resume it with `molt rollout resume workers-1.1.0 --reason …`\n',
    );
    await store.updateRollout('workers-1.1.0', (r) => ({ ...r, state: was ?? r.state }));
    const again = await molt(['releases', 'unblock', '1.1.0', ...as('operator')]);
    assert.match(again.stderr, /MOLT_NOT_BLOCKED: release 1\.1\.0 is not blocked for every pool/);
    assert.equal(
      (await molt(['releases', 'blocked', ...as('node')])).stdout,
      'no release is blocked\n',
    );
    assert.deepEqual((await store.read()).blocks, []);
  });

  it('says no operator is configured, naming the flag, the environment and contexts', async () => {
    const missing = await molt(['rollout', 'list']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^error MOLT_NO_ENDPOINT: no operator is configured\n/);
    for (const way of ['--endpoint', 'MOLT_OPERATOR', 'molt config use-context', 'molt lab up'])
      assert.ok(missing.stderr.includes(way), `names ${way}: ${missing.stderr}`);
  });

  it('says when the operator is not there', async () => {
    const away = await molt([
      'rollout',
      'list',
      ...as('node').slice(2),
      '--endpoint',
      'https://127.0.0.1:1',
    ]);
    assert.equal(away.code, 1);
    // Not just `fetch failed`: the endpoint, why, and what to check.
    assert.match(
      away.stderr,
      /^error MOLT_OPERATOR_UNREACHABLE: cannot reach the operator at https:\/\/127\.0\.0\.1:1: connection refused/,
    );
    const closed = await freePort();
    const refused = await molt([
      'rollout',
      'list',
      ...as('node').slice(2),
      '--endpoint',
      `https://127.0.0.1:${String(closed)}`,
    ]);
    assert.equal(
      refused.stderr,
      `error MOLT_OPERATOR_UNREACHABLE: cannot reach the operator at https://127.0.0.1:${String(closed)}: connection refused: nothing listens there (ECONNREFUSED)\n` +
        '  hint: is `molt operator` running, with `listen` in its config, at --endpoint (MOLT_OPERATOR)? In a lab: `molt lab status`\n',
    );
    const unknown = await molt([
      'rollout',
      'list',
      ...as('node').slice(2),
      '--endpoint',
      'https://no-such-host.invalid:7443',
    ]);
    assert.match(unknown.stderr, /at https:\/\/no-such-host\.invalid:7443: DNS: no such host \(E/);
    assert.doesNotMatch(unknown.stderr + refused.stderr, /fetch failed/);
  });

  it('lists rollout ids and machine names for shell completion, and nothing when no operator answers', async () => {
    const env = {
      MOLT_OPERATOR: api.url,
      MOLT_CA: files['ca']!,
      MOLT_CERT: files['node.pem']!,
      MOLT_KEY: files['node.key']!,
    };
    const rollouts = await molt(['__complete', 'rollouts'], env);
    assert.equal(rollouts.code, 0, rollouts.stderr);
    const ids = (await store.read()).rollouts.map((r) => r.id);
    assert.deepEqual(rollouts.stdout.trim().split('\n').sort(), [...ids].sort());
    const machines = await molt(['__complete', 'machines'], env);
    assert.ok(machines.stdout.split('\n').includes('w-1'), machines.stdout);
    const away = await molt(['__complete', 'machines'], {
      ...env,
      MOLT_OPERATOR: 'https://127.0.0.1:1',
    });
    assert.deepEqual([away.code, away.stdout, away.stderr], [0, '', '']);
    const help = await molt(['--help']);
    assert.doesNotMatch(help.stdout, /__complete/, 'hidden from people');
  });

  it('rolls a rollout back only with --yes: without it, what it would do, and nothing done', async () => {
    const preview = await molt(['rollout', 'rollback', 'cp-1.0.9', ...as('operator')]);
    assert.equal(preview.code, 1);
    assert.match(
      preview.stdout,
      /^rollout cp-1\.0\.9 \(pool cp, Halted\) would be reversed: a new rollout cp-1\.0\.9-rollback takes pool cp back to 1\.0\.8, under the pool's policies\n {2}machines it moved to 1\.0\.9: cp-2\n {2}then: cp-1\.0\.9 ends RolledBack, and 1\.0\.9 is blocked for pool cp until `molt releases unblock 1\.0\.9 --pool cp`\n/,
    );
    assert.match(preview.stderr, /^error MOLT_BAD_FLAG: not rolled back: cp-1\.0\.9 needs --yes\n/);
    const ids = async () => (await store.read()).rollouts.map((r) => r.id);
    assert.ok(!(await ids()).includes('cp-1.0.9-rollback'), 'nothing was rolled back');
    const done = await molt([
      ...['rollout', 'rollback', 'cp-1.0.9', '--yes', '--reason', 'etcd latency'],
      ...as('operator'),
    ]);
    assert.equal(done.code, 0, done.stderr);
    assert.match(done.stdout, /^rollout cp-1\.0\.9-rollback: started, back to 1\.0\.8\n/);
    assert.match(
      done.stdout,
      /^rollout cp-1\.0\.9 is RolledBack; release 1\.0\.9 is blocked for pool cp \(offer it again: molt releases unblock 1\.0\.9 --pool cp\)$/m,
    );
    assert.ok((await ids()).includes('cp-1.0.9-rollback'));
    const list = await molt(['rollout', 'list', ...as('node')]);
    assert.match(list.stdout, /^cp-1\.0\.9 +cp +1\.0\.9 \(\w+\) +RolledBack /m);
    assert.match(list.stdout, /^cp-1\.0\.9-rollback +cp +1\.0\.8 \(\w+\) \[rollback\] +Active /m);
    const blocked = await molt(['releases', 'blocked', ...as('node')]);
    assert.match(
      blocked.stdout,
      /^1\.0\.9 +\w+ +cp +alice +.* rolled back by cp-1\.0\.9-rollback \(to 1\.0\.8\): etcd latency$/m,
    );
    const offered = await molt(['releases', 'unblock', '1.0.9', '--pool', 'cp', ...as('operator')]);
    assert.equal(offered.code, 0, offered.stderr);
    assert.match(
      offered.stdout,
      /^pool cp is offered 1\.0\.9 again \(rollout cp-1\.0\.9 was rolled back\): discovery starts a new rollout once the pool’s running rollout ends; `molt plan` shows it$/m,
    );
  });

  it('cancels a halted rollout for good, saying who and why; a completed or rolled-back one stays', async () => {
    const done = await molt(['rollout', 'cancel', 'workers-1.0.1', ...as('operator')]);
    assert.equal(done.code, 1);
    assert.match(done.stderr, /MOLT_ROLLOUT_STATE: rollout workers-1\.0\.1 is Completed/);
    const back = await molt(['rollout', 'cancel', 'cp-1.0.9', ...as('operator')]);
    assert.equal(back.code, 1);
    assert.match(
      back.stderr,
      /MOLT_ROLLOUT_STATE: rollout cp-1\.0\.9 is RolledBack: it cannot be cancelled\n/,
    );
    assert.match(
      back.stderr,
      /offer its release again with `molt releases unblock 1\.0\.9 --pool cp`/,
    );
    const cp109 = fixtureRollouts.find((x) => x.id === 'cp-1.0.9');
    assert.ok(cp109 !== undefined);
    await store.createRollout({
      ...cp109,
      id: 'cp-1.0.7',
      target: { ...cp109.target, version: '1.0.7' },
    });
    const r = await molt([
      'rollout',
      'cancel',
      'cp-1.0.7',
      '--reason',
      '1.0.7 is bad',
      ...as('operator'),
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'rollout cp-1.0.7: now Cancelled\n');
    const status = await molt(['rollout', 'status', 'cp-1.0.7', ...as('node')]);
    assert.match(status.stdout, /^state: {4}Cancelled \(cancelled by alice: 1\.0\.7 is bad\)$/m);
    const followed = await molt(['rollout', 'status', 'cp-1.0.7', '--follow', ...as('node')]);
    assert.equal(followed.code, 1, 'following an ended rollout that did not complete ends with 1');
  });
});
