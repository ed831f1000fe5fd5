// SPDX-License-Identifier: Apache-2.0
// `molt cluster recover` in-process against three agent APIs whose recovery routes reach fakes:
// refusals before any machine is touched, then the order of the steps across the machines.
import assert from 'node:assert/strict';
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../../protocol/index.ts';
import { startRecoveryAgents, type RecoveryAgents } from '../../../testkit/cli-recovery-agents.ts';
import { memoryIo } from '../../io.ts';
import { main } from '../../main.ts';

const snapshot = Buffer.concat([
  Buffer.from('00000000000000000400000000000000edda0ced02000000', 'hex'),
  Buffer.alloc(5000, 3),
]);

describe('molt cluster recover', () => {
  let f: RecoveryAgents;
  let file: string;
  before(async () => {
    f = await startRecoveryAgents(['cp-1', 'cp-2', 'cp-3']);
    file = join(f.dir, 'etcd.snapshot');
    await writeFile(file, snapshot);
  });
  after(async () => {
    await f.close();
  });

  async function molt(args: string[], env: Record<string, string> = {}) {
    const io = memoryIo(env);
    const code = await main([...args, ...f.flags('admin')], io);
    return { code, stdout: io.stdout(), stderr: io.stderr() };
  }
  const machines = (): string[] => f.agents.flatMap((a) => ['--machine', a.api.url]);
  const touched = (): string[] =>
    f.agents.flatMap((a) => [...a.services.calls, ...a.etcd.calls.filter((c) => c !== 'members')]);

  it('refuses a missing file, a file that is not a snapshot, and no machines, touching nothing', async () => {
    const missing = await molt([
      'cluster',
      'recover',
      '--etcd-snapshot',
      join(f.dir, 'none'),
      ...machines(),
    ]);
    assert.match(missing.stderr, /MOLT_BAD_FLAG: --etcd-snapshot .*none/);
    const kubeconfig = join(f.dir, 'kubeconfig');
    await writeFile(kubeconfig, 'apiVersion: v1\nkind: Config\nclusters: []\n');
    const wrong = await molt(['cluster', 'recover', '--etcd-snapshot', kubeconfig, ...machines()]);
    assert.match(
      wrong.stderr,
      new RegExp(`${ErrorCode.EtcdSnapshotInvalid}: .*kubeconfig is not an etcd snapshot`),
    );
    const none = await molt(['cluster', 'recover', '--etcd-snapshot', file]);
    assert.match(none.stderr, /MOLT_BAD_FLAG: --machine is required/);
    const twice = await molt([
      'cluster',
      'recover',
      '--etcd-snapshot',
      file,
      '--machine',
      'a',
      '--machine',
      'a',
    ]);
    assert.match(twice.stderr, /MOLT_BAD_FLAG: --machine names a machine twice/);
    assert.deepEqual(touched(), []);
  });

  it('refuses a snapshot the local etcdutl cannot read, touching nothing', async () => {
    const etcdutl = join(f.dir, 'etcdutl');
    await writeFile(
      etcdutl,
      '#!/bin/sh\necho "Error: snapshot file integrity check failed" >&2\nexit 1\n',
    );
    await chmod(etcdutl, 0o755);
    const r = await molt(['cluster', 'recover', '--etcd-snapshot', file, ...machines()], {
      MOLT_ETCDUTL: etcdutl,
    });
    assert.match(r.stderr, /MOLT_ETCD_SNAPSHOT_INVALID: .*integrity check failed/);
    assert.deepEqual(touched(), []);
  });

  it('stops the others’ members, restores the first, then rejoins the others one at a time', async () => {
    const order: string[] = [];
    for (const a of f.agents) {
      const { services, etcd } = a;
      const stop = services.stop.bind(services);
      services.stop = (name) => (order.push(`${a.name} stop ${name}`), stop(name));
      const restore = etcd.restore.bind(etcd);
      etcd.restore = (path) => (order.push(`${a.name} restore`), restore(path));
      const rejoin = etcd.rejoin.bind(etcd);
      etcd.rejoin = () => (order.push(`${a.name} rejoin`), rejoin());
    }
    const r = await molt(['cluster', 'recover', '--etcd-snapshot', file, ...machines()]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(order, [
      'cp-2 stop kube-apiserver',
      'cp-2 stop etcd',
      'cp-3 stop kube-apiserver',
      'cp-3 stop etcd',
      'cp-1 restore',
      'cp-2 rejoin',
      'cp-3 rejoin',
    ]);
    assert.deepEqual(Buffer.from(f.agents[0]?.etcd.restored?.bytes ?? []), snapshot);
    assert.match(r.stdout, /restored; 1 member: cp-1 \(leader\)/);
    assert.match(r.stdout, /a healthy voter/);
  });
});
