// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { access, mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  createEtcdService,
  type EtcdServiceOptions,
} from '../../src/agent/adapters/etcd-service/index.ts';
import { pidAlive } from '../../src/agent/adapters/process-service/pid.ts';
import { ErrorCode } from '../../src/protocol/index.ts';
import { freePort } from '../../src/platform/process/free-port.ts';
import { eventually, tempDir } from '../../src/platform/process/managed-process.ts';
import { rejectsWithCode } from '../../src/testkit/registry-conformance.ts';

/**
 * Whether `pid` runs (a zombie does not). The test process is etcd's parent, so a stopped etcd
 * stays a zombie until this event loop reaps it; `kill(pid, 0)` would still call it alive.
 */
const alive = (pid: number): Promise<boolean> => pidAlive(pid);

async function options(root: string): Promise<EtcdServiceOptions> {
  const peerUrl = `http://127.0.0.1:${await freePort()}`;
  const clientUrl = `http://127.0.0.1:${await freePort()}`;
  return {
    root,
    name: 'cp-0',
    peerUrl,
    clientUrl,
    initialCluster: `cp-0=${peerUrl}`,
    dataDir: join(root, 'ephemeral', 'etcd'),
    clusterToken: root,
  };
}

const pidOf = async (root: string): Promise<number> =>
  Number((await readFile(join(root, 'run', 'etcd.pid'), 'utf8')).trim());

describe('lab etcd service', () => {
  let dir: { path: string; remove: () => Promise<void> };
  let o: EtcdServiceOptions;
  before(async () => {
    dir = await tempDir('etcd-service');
    o = await options(dir.path);
  });
  after(async () => {
    await createEtcdService(o).stopAll();
    await dir.remove();
  });

  it('starts etcd detached with a PID file and keeps it across an agent restart', async () => {
    await createEtcdService(o).startAll();
    const pid = await pidOf(dir.path);
    assert.ok(await alive(pid));
    const res = await eventually(() => fetch(`${o.clientUrl}/health`).then((r) => r.text()), {
      timeoutMs: 10_000,
    });
    assert.match(res, /"health":"true"/);
    const restarted = createEtcdService(o); // a new agent process in the same boot
    assert.deepEqual(await restarted.running(), ['etcd']);
    await restarted.startAll();
    assert.equal(await pidOf(dir.path), pid, 'the running etcd was kept');
  });

  it('stops by PID, level-triggered, and starts again on the same data', async () => {
    const service = createEtcdService(o);
    const pid = await pidOf(dir.path);
    await service.stopAll();
    assert.equal(await alive(pid), false);
    assert.deepEqual(await service.running(), []);
    await service.stopAll();
    await service.startAll();
    assert.notEqual(await pidOf(dir.path), pid);
    await access(join(o.dataDir, 'member', 'wal'));
  });

  it('ignores a PID file naming a process that is not this etcd', async () => {
    const service = createEtcdService(o);
    await service.stopAll();
    await writeFile(join(dir.path, 'run', 'etcd.pid'), `${process.pid}\n`);
    assert.deepEqual(await service.running(), []);
    await service.stopAll(); // must not signal the test runner
    assert.ok(await alive(process.pid));
    await writeFile(join(dir.path, 'run', 'etcd.pid'), `${process.pid}\n`);
    await service.startAll();
    assert.notEqual(await pidOf(dir.path), process.pid);
    assert.deepEqual(await service.running(), ['etcd']);
  });

  it('reports a start on a port another process holds', async () => {
    const taken = { ...(await options(join(dir.path, 'taken'))), peerUrl: o.peerUrl };
    const service = createEtcdService({ ...taken, initialCluster: `cp-0=${o.peerUrl}` });
    await rejectsWithCode(
      service.startAll(),
      ErrorCode.EtcdUnhealthy,
      'exited at start',
      'address already in use',
    );
  });

  it("reports a start that fails with etcd's own output", async () => {
    const fresh = await options(join(dir.path, 'bad'));
    const service = createEtcdService({
      ...fresh,
      initialCluster: 'someone-else=http://127.0.0.1:1',
    });
    await rejectsWithCode(service.startAll(), ErrorCode.EtcdUnhealthy, 'exited at start', 'cp-0');
  });
});

/** cgroup v1 freezer: a frozen process does not act on SIGKILL until thawed — a stop that cannot complete. */
const freezer = '/sys/fs/cgroup/freezer';
const canFreeze = await access(join(freezer, 'cgroup.procs')).then(
  () => process.getuid?.() === 0,
  () => false,
);

describe(
  'lab etcd service: a stop that cannot complete',
  { skip: canFreeze ? false : 'needs root and the cgroup v1 freezer' },
  () => {
    it('throws ServiceStopFailed when etcd survives SIGTERM and SIGKILL', async () => {
      const dir = await tempDir('etcd-frozen');
      const group = join(freezer, `molt-test-${process.pid}`);
      const o = { ...(await options(dir.path)), stopGraceMs: 300, killWaitMs: 500 };
      const service = createEtcdService(o);
      try {
        await service.startAll();
        const pid = await pidOf(dir.path);
        await mkdir(group);
        await writeFile(join(group, 'cgroup.procs'), `${pid}\n`);
        await writeFile(join(group, 'freezer.state'), 'FROZEN\n');
        await rejectsWithCode(service.stopAll(), ErrorCode.ServiceStopFailed, String(pid));
        assert.ok(await alive(pid));
        await writeFile(join(group, 'freezer.state'), 'THAWED\n');
        await eventually(
          async () => {
            assert.equal(await alive(pid), false);
          },
          { timeoutMs: 5_000 },
        );
        await service.stopAll();
        assert.deepEqual(await service.running(), []);
      } finally {
        await writeFile(join(group, 'freezer.state'), 'THAWED\n').catch(() => undefined);
        await service.stopAll().catch(() => undefined);
        await rmdir(group).catch(() => undefined);
        await dir.remove();
      }
    });
  },
);
