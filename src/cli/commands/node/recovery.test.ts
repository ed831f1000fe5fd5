// SPDX-License-Identifier: Apache-2.0
// `molt node service|etcd` and `molt node logs --service` in-process against an agent API over
// mutual TLS whose recovery routes reach fakes.
import assert from 'node:assert/strict';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../../protocol/index.ts';
import { eventually } from '../../../platform/process/managed-process.ts';
import { startRecoveryAgents, type RecoveryAgents } from '../../../testkit/cli-recovery-agents.ts';
import { memoryIo } from '../../io.ts';
import { main } from '../../main.ts';

/** The first bytes of a bbolt file, as a snapshot starts. */
const snapshotHead = Buffer.from('00000000000000000400000000000000edda0ced02000000', 'hex');

describe('molt node service|etcd', () => {
  let f: RecoveryAgents;
  before(async () => {
    f = await startRecoveryAgents(['cp-1']);
  });
  after(async () => {
    await f.close();
  });
  const agent = () => f.agents[0]!;

  async function molt(args: string[], who: 'admin' | 'operator' = 'admin') {
    const io = memoryIo({});
    const code = await main([...args, '--endpoint', agent().api.url, ...f.flags(who)], io);
    return { code, stdout: io.stdout(), stderr: io.stderr() };
  }

  it('lists the services and stops and starts one as an admin', async () => {
    const list = await molt(['node', 'service', 'list']);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /^SERVICE\s+RUNNING\s+PID\s+SINCE\netcd\s+yes\s+1000/);
    const stop = await molt(['node', 'service', 'stop', 'kube-apiserver']);
    assert.equal(stop.stdout, 'kube-apiserver: stopped\n');
    const start = await molt(['node', 'service', 'start', 'kube-apiserver', '-o', 'json']);
    assert.equal((JSON.parse(start.stdout) as { running: boolean }).running, true);
    assert.deepEqual(agent().services.calls, ['stop kube-apiserver', 'start kube-apiserver']);
  });

  it('lets an operator certificate look and hand leadership over, but not act on services or membership', async () => {
    assert.equal((await molt(['node', 'etcd', 'members'], 'operator')).code, 0);
    const forfeit = await molt(['node', 'etcd', 'forfeit-leadership'], 'operator');
    assert.equal(forfeit.code, 0, forfeit.stderr);
    const calls = agent().services.calls.length;
    for (const args of [
      ['node', 'service', 'restart', 'etcd'],
      ['node', 'etcd', 'remove-member', 'b2'],
    ]) {
      const r = await molt(args, 'operator');
      assert.equal(r.code, 1, args.join(' '));
      assert.match(
        r.stderr,
        /MOLT_FORBIDDEN.*\n {2}hint: this needs a certificate with role admin/,
      );
    }
    assert.equal(agent().services.calls.length, calls);
  });

  it('names an unknown service with the ones there are', async () => {
    const r = await molt(['node', 'service', 'stop', 'kube-nope']);
    assert.match(r.stderr, new RegExp(`${ErrorCode.ServiceNotFound}.*\\n.*etcd, kube-apiserver`));
  });

  it('prints a service’s log lines, its tail bounded before asking', async () => {
    agent().services.logLines['etcd'] = ['one', 'two', 'three'];
    const r = await molt(['node', 'logs', '--service', 'etcd', '--tail', '2']);
    assert.equal(r.stdout, 'two\nthree\n');
    const tooMany = await molt(['node', 'logs', '--service', 'etcd', '--tail', '10001']);
    assert.match(tooMany.stderr, /MOLT_BAD_FLAG: --tail is at most 10000 lines/);
  });

  it('follows a service’s log until ctrl-C, which exits 0 and ends the agent’s follower', async () => {
    agent().services.logLines['kube-apiserver'] = ['started'];
    const io = memoryIo({});
    const running = main(
      [
        'node',
        'logs',
        '--service',
        'kube-apiserver',
        '--follow',
        '--endpoint',
        agent().api.url,
        ...f.flags('admin'),
      ],
      io,
    );
    await eventually(async () => {
      assert.equal(io.stdout(), 'started\n');
      await Promise.resolve();
    });
    io.interrupt();
    assert.equal(await running, 0);
    await eventually(async () => {
      assert.equal(agent().services.followsEnded, 1, 'the agent saw its client leave');
      await Promise.resolve();
    });
  });

  it('saves a snapshot to a private file, and refuses what is not one', async () => {
    const file = join(f.dir, 'etcd.snapshot');
    agent().etcd.snapshotBytes = Buffer.concat([snapshotHead, Buffer.alloc(1000, 1)]);
    const r = await molt(['node', 'etcd', 'snapshot', '--output', file]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await readFile(file)).length, snapshotHead.length + 1000);
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    agent().etcd.snapshotBytes = Buffer.from('<html>a proxy page</html>');
    const bad = join(f.dir, 'bad.snapshot');
    const refused = await molt(['node', 'etcd', 'snapshot', '--output', bad]);
    assert.match(refused.stderr, /MOLT_AGENT_PROTOCOL/);
    await assert.rejects(stat(bad), 'no file is left that looks like a snapshot');
    await assert.rejects(stat(`${bad}.part`));
    const noFile = await molt(['node', 'etcd', 'snapshot']);
    assert.match(noFile.stderr, /MOLT_BAD_FLAG: --output is required/);
  });

  it('shows the members, forfeits leadership and removes a member by hex id', async () => {
    const members = await molt(['node', 'etcd', 'members']);
    assert.match(members.stdout, /^ID\s+NAME\s+ROLE/);
    assert.match(members.stdout, /a1\s+cp-1\s+leader/);
    const forfeit = await molt(['node', 'etcd', 'forfeit-leadership', '--to', 'c3']);
    assert.equal(forfeit.stdout, 'leadership moved to member c3\n');
    const bad = await molt(['node', 'etcd', 'remove-member', 'not-hex']);
    assert.match(bad.stderr, /MOLT_BAD_FLAG: --id must be a hex member id/);
    const removed = await molt(['node', 'etcd', 'remove-member', 'c3']);
    assert.equal(removed.code, 0, removed.stderr);
    assert.doesNotMatch(removed.stdout, /cp-3/);
    const rejoined = await molt(['node', 'etcd', 'rejoin']);
    assert.match(rejoined.stdout, /^rejoined\nID/);
    assert.deepEqual(agent().etcd.calls.slice(-3), ['forfeit c3', 'remove c3', 'rejoin']);
  });
});
