// SPDX-License-Identifier: Apache-2.0
// Restore and rejoin as orchestration, on fakes and closed ports (no etcd here; the hosted
// cluster's recovery test runs them for real): what is refused before anything stops, the order of
// stop, move and start, and that an old data dir is moved aside, never deleted.
import assert from 'node:assert/strict';
import { chown, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { ErrorCode } from '../../../core/errors.ts';
import { freePort } from '../../../platform/process/free-port.ts';
import { tempDir } from '../../../platform/process/managed-process.ts';
import { createEtcdutlRunner, type EtcdutlRunner } from './etcdutl.ts';
import type { MemberCtx } from './member-ctx.ts';
import { rejoin, restore, type RestoreDeps } from './restore.ts';

/** The first bytes of a bbolt file (what `etcdctl snapshot save` writes), then padding. */
const snapshotBytes = Buffer.concat([
  Buffer.from('00000000000000000400000000000000edda0ced020000000010000000000000', 'hex'),
  Buffer.alloc(4096),
]);

describe('etcd restore and rejoin (orchestration)', () => {
  let dir: { path: string; remove(): Promise<void> };
  let calls: string[];
  let ctx: MemberCtx;
  let snapshot: string;
  before(async () => {
    dir = await tempDir('etcd-restore');
  });
  after(async () => {
    await dir.remove();
  });
  beforeEach(async () => {
    calls = [];
    const root = join(dir.path, String(Math.random()).slice(2));
    await mkdir(join(root, 'etcd', 'member'), { recursive: true });
    await writeFile(join(root, 'etcd', 'member', 'old'), 'the old cluster');
    snapshot = join(root, 'snapshot.db');
    await writeFile(snapshot, snapshotBytes);
    // Closed ports: no etcd answers (a restore's final wait and a rejoin's lookup fail fast).
    const closed = `http://127.0.0.1:${String(await freePort())}`;
    ctx = {
      name: 'cp-1',
      peerUrl: 'http://127.0.0.1:2380',
      clientUrl: closed,
      endpoints: [closed, `http://127.0.0.1:${String(await freePort())}`],
      dataDir: join(root, 'etcd'),
      service: {
        stopAll: () => record('stop etcd'),
        startAll: () => record('start etcd'),
        running: () => Promise.resolve([]),
        enable: () => record('enable etcd'),
      },
      timeoutMs: 200,
      rejoinTimeoutMs: 300,
    };
  });
  const record = (what: string): Promise<void> => {
    calls.push(what);
    return Promise.resolve();
  };
  const deps = (etcdutl: EtcdutlRunner): RestoreDeps => ({
    ctx,
    services: {
      stopAll: () => record('stop all'),
      startAll: () => record('start all'),
      running: () => Promise.resolve([]),
    },
    etcd: ctx.service,
    member: {
      checkQuorum: () => Promise.reject(new Error('unused')),
      leave: () => Promise.reject(new Error('unused')),
      healthy: () => Promise.reject(new Error('unused')),
      rejoin: (o) => record(`rejoin asNewMember=${String(o.asNewMember)}`),
    },
    etcdutl,
    now: () => new Date('2026-11-27T01:40:51.123Z'),
  });
  /** An etcdutl that reads any snapshot and restores by making the data dir. */
  const goodEtcdutl: EtcdutlRunner = async (args) => {
    calls.push(`etcdutl ${args.slice(0, 2).join(' ')}`);
    if (args[1] === 'restore') {
      const out = args[args.indexOf('--data-dir') + 1] ?? '';
      await mkdir(join(out, 'member'), { recursive: true });
      await writeFile(join(out, 'member', 'restored'), args.join(' '));
    }
    return { code: 0, stdout: '{"revision":5,"totalKey":9}', stderr: '' };
  };

  it('refuses a file that is not a snapshot before anything stops', async () => {
    await writeFile(snapshot, 'apiVersion: v1\nkind: Config\n');
    await assert.rejects(restore(deps(goodEtcdutl), snapshot), {
      code: ErrorCode.EtcdSnapshotInvalid,
    });
    assert.deepEqual(calls, []);
  });

  it('refuses a snapshot etcdutl cannot read, or cannot restore, before anything stops', async () => {
    const unreadable: EtcdutlRunner = () =>
      Promise.resolve({
        code: 1,
        stdout: '',
        stderr: 'Error: snapshot file integrity check failed',
      });
    await assert.rejects(
      restore(deps(unreadable), snapshot),
      (e: { code: string; message: string }) => {
        assert.equal(e.code, ErrorCode.EtcdSnapshotInvalid);
        assert.match(e.message, /integrity check failed/);
        return true;
      },
    );
    const failsToRestore: EtcdutlRunner = async (args) => {
      if (args[1] === 'restore') {
        await mkdir(args[args.indexOf('--data-dir') + 1] ?? '', { recursive: true });
        return { code: 1, stdout: '', stderr: 'Error: disk full' };
      }
      return { code: 0, stdout: '{}', stderr: '' };
    };
    await assert.rejects(restore(deps(failsToRestore), snapshot), {
      code: ErrorCode.EtcdSnapshotInvalid,
    });
    assert.deepEqual(calls, []);
    assert.deepEqual(
      await readdir(join(ctx.dataDir, '..')),
      ['etcd', 'snapshot.db'],
      'its partial output removed',
    );
    await assert.rejects(
      restore(deps(createEtcdutlRunner(join(dir.path, 'no-etcdutl'))), snapshot),
      {
        code: ErrorCode.ToolMissing,
      },
    );
  });

  it('restores beside the data dir, then stops everything, moves the old data aside and starts', async () => {
    // The final wait fails: no etcd answers here. What it did up to there is the test.
    await assert.rejects(restore(deps(goodEtcdutl), snapshot), { code: ErrorCode.EtcdUnhealthy });
    assert.deepEqual(calls, [
      'etcdutl snapshot status',
      'etcdutl snapshot restore',
      'stop all',
      'enable etcd',
      'start all',
    ]);
    const aside = `${ctx.dataDir}.pre-restore-20261127T014051Z`;
    assert.equal(await readFile(join(aside, 'member', 'old'), 'utf8'), 'the old cluster');
    const args = await readFile(join(ctx.dataDir, 'member', 'restored'), 'utf8');
    for (const flag of [
      '--name cp-1',
      '--initial-cluster cp-1=http://127.0.0.1:2380',
      '--initial-advertise-peer-urls http://127.0.0.1:2380',
      '--initial-cluster-token molt-restore-20261127T014051Z',
      '--bump-revision 1000000000 --mark-compacted',
    ])
      assert.ok(args.includes(flag), `${flag} in ${args}`);
  });

  const needsRoot = process.getuid?.() === 0 ? false : 'needs root (chown)';
  it(
    'gives the restored data the owner of the data dir it replaces (etcd runs as its own user)',
    { skip: needsRoot },
    async () => {
      await chown(ctx.dataDir, 4242, 4343);
      await assert.rejects(restore(deps(goodEtcdutl), snapshot), { code: ErrorCode.EtcdUnhealthy });
      for (const path of [
        ctx.dataDir,
        join(ctx.dataDir, 'member'),
        join(ctx.dataDir, 'member', 'restored'),
      ]) {
        const s = await stat(path);
        assert.deepEqual([s.uid, s.gid], [4242, 4343], path);
      }
    },
  );

  it('refuses to rejoin when no live cluster answers, before anything stops or moves', async () => {
    await assert.rejects(rejoin(deps(goodEtcdutl)), (e: { code: string; hint: string }) => {
      assert.equal(e.code, ErrorCode.EtcdUnhealthy);
      assert.match(e.hint, /restore one machine first/);
      return true;
    });
    assert.deepEqual(calls, []);
    assert.equal(await readFile(join(ctx.dataDir, 'member', 'old'), 'utf8'), 'the old cluster');
  });
});
