// SPDX-License-Identifier: Apache-2.0
// The recovery routes (docs/adr/0012 §6) on fakes: who may call what, bad input refused before
// anything is reached, bounded uploads and log tails, byte streams as they are.
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { after, describe, it } from 'node:test';
import { ErrorCode } from '../../core/errors.ts';
import { tempDir } from '../../platform/process/managed-process.ts';
import { KubernetesRoutes as R, MaxLogTail } from '../../protocol/agent-kubernetes.ts';
import type { Role } from '../../protocol/agent.ts';
import { createMemoryJournalStore } from '../ports/journal-store.fake.ts';
import { createFakeEtcdRecovery } from '../ports/etcd-recovery.fake.ts';
import { createFakeServiceControl } from '../ports/service-control.fake.ts';
import { buildAgentApp, type AgentAppOptions } from './routes.ts';
import { limitedServerFactory } from '../../platform/https/listener.ts';
import type { EtcdRecovery } from '../ports/etcd-recovery.ts';
import { createFakeAgentService } from './service.fake.ts';

const dirs: { remove(): Promise<void> }[] = [];
after(async () => {
  for (const d of dirs) await d.remove();
});

interface SetupOptions {
  readonly worker?: boolean;
  readonly maxSnapshotBytes?: number;
  /** A restore that takes this long (its answer comes after). */
  readonly restoreMs?: number;
  readonly options?: AgentAppOptions;
}

async function setup(role: Role, o: SetupOptions = {}) {
  const uploads = await tempDir('recovery-routes');
  dirs.push(uploads);
  const service = createFakeAgentService();
  const services = createFakeServiceControl();
  const etcd = createFakeEtcdRecovery();
  const slow: EtcdRecovery = {
    ...etcd,
    restore: async (file) => {
      const members = await etcd.restore(file);
      await new Promise((r) => setTimeout(r, o.restoreMs ?? 0));
      return members;
    },
  };
  const app = buildAgentApp(
    {
      service,
      journal: createMemoryJournalStore(),
      identify: () => ({ name: `${role}-1`, role }),
      recovery: {
        services,
        ...(o.worker !== true && { etcd: slow }),
        uploadDir: uploads.path,
        ...(o.maxSnapshotBytes !== undefined && { maxSnapshotBytes: o.maxSnapshotBytes }),
      },
    },
    o.options,
  );
  return { app, service, services, etcd, uploads: uploads.path };
}

/** Every recovery route that changes something, with a body it accepts. */
const changes = [
  { url: R.serviceStart('etcd'), payload: {} },
  { url: R.serviceStop('etcd'), payload: {} },
  { url: R.serviceRestart('etcd'), payload: {} },
  { url: R.etcdSnapshot, payload: {} },
  { url: R.etcdRemove('b2'), payload: {} },
  { url: R.etcdRejoin, payload: {} },
] as const;

const code = (res: { body: string }): string => (JSON.parse(res.body) as { code: string }).code;

describe('agent recovery routes', () => {
  it('refuses an operator certificate on every route that is not a GET, before reaching anything', async () => {
    const { app, services, etcd } = await setup('operator');
    for (const c of changes) {
      const res = await app.inject({ method: 'POST', ...c });
      assert.equal(res.statusCode, 403, c.url);
      assert.equal(code(res), ErrorCode.Forbidden, c.url);
    }
    const restore = await app.inject({
      method: 'POST',
      url: R.etcdRestore,
      headers: { 'content-type': 'application/octet-stream' },
      payload: Buffer.from('snapshot'),
    });
    assert.equal(restore.statusCode, 403);
    assert.deepEqual(services.calls, []);
    assert.deepEqual(etcd.calls, []);
  });

  it('lets the operator hand etcd leadership over, as its upgrade plans do, and no more', async () => {
    const { app, etcd } = await setup('operator');
    const res = await app.inject({ method: 'POST', url: R.etcdForfeit, payload: {} });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(etcd.calls, ['forfeit -']);
    const node = await setup('node');
    const refused = await node.app.inject({ method: 'POST', url: R.etcdForfeit, payload: {} });
    assert.equal(refused.statusCode, 403);
    assert.deepEqual(node.etcd.calls, []);
  });

  it('lets an admin act, and every role read', async () => {
    const admin = await setup('admin');
    for (const c of changes)
      assert.equal((await admin.app.inject({ method: 'POST', ...c })).statusCode, 200, c.url);
    assert.deepEqual(admin.services.calls, ['start etcd', 'stop etcd', 'restart etcd']);
    assert.deepEqual(admin.etcd.calls, ['snapshot', 'remove b2', 'rejoin']);
    const node = await setup('node');
    const list = await node.app.inject({ method: 'GET', url: R.services });
    assert.equal(list.statusCode, 200);
    assert.deepEqual(
      list.json<{ name: string }[]>().map((s) => s.name),
      ['etcd', 'kube-apiserver'],
    );
    assert.equal((await node.app.inject({ method: 'GET', url: R.etcdMembers })).statusCode, 200);
  });

  it('refuses an id that is not hex, an unknown service and a worker’s etcd with stable codes', async () => {
    const { app, etcd } = await setup('admin');
    for (const id of ['zz', 'a'.repeat(17), '-1', 'b2 '])
      assert.equal(
        code(await app.inject({ method: 'POST', url: R.etcdRemove(id), payload: {} })),
        ErrorCode.BadInput,
        id,
      );
    assert.deepEqual(etcd.calls, [], 'a bad id never reaches etcd');
    const unknown = await app.inject({
      method: 'POST',
      url: R.serviceStop('kube-nope'),
      payload: {},
    });
    assert.equal(unknown.statusCode, 404);
    assert.equal(code(unknown), ErrorCode.ServiceNotFound);
    assert.match(unknown.json<{ hint: string }>().hint, /etcd, kube-apiserver/);
    const stranger = await app.inject({ method: 'POST', url: R.etcdRemove('ffff'), payload: {} });
    assert.equal(stranger.statusCode, 404);
    assert.equal(code(stranger), ErrorCode.EtcdMemberNotFound);
    const extra = await app.inject({ method: 'POST', url: R.etcdRejoin, payload: { force: true } });
    assert.equal(code(extra), ErrorCode.BadInput);
    const worker = await setup('admin', { worker: true });
    const members = await worker.app.inject({ method: 'GET', url: R.etcdMembers });
    assert.equal(members.statusCode, 409);
    assert.equal(code(members), ErrorCode.NotControlPlane);
  });

  it('refuses to stop services or move etcd data while an operation runs', async () => {
    const { app, service, services, etcd } = await setup('admin');
    service.running = {
      id: 'op-7',
      kind: 'upgrade',
      phase: 'Writing',
      startedAt: new Date(0).toISOString(),
    };
    for (const url of [R.serviceStop('etcd'), R.etcdRejoin, R.etcdRemove('b2')]) {
      const res = await app.inject({ method: 'POST', url, payload: {} });
      assert.equal(res.statusCode, 409, url);
      assert.equal(code(res), ErrorCode.AgentBusy, url);
    }
    assert.deepEqual([...services.calls, ...etcd.calls], []);
  });

  it('streams a restore upload to a file under the state dir, and removes it afterwards', async () => {
    const { app, etcd, uploads } = await setup('admin');
    const snapshot = Buffer.alloc(200_000, 7);
    const res = await app.inject({
      method: 'POST',
      url: R.etcdRestore,
      headers: { 'content-type': 'application/octet-stream' },
      payload: snapshot,
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(Buffer.from(etcd.restored?.bytes ?? []), snapshot);
    assert.ok(etcd.restored?.path.startsWith(uploads));
    assert.deepEqual(await readdir(uploads), [], 'the upload is removed');
  });

  it('keeps the connection of a restore that outlasts the listener’s idle timeout', async () => {
    const serverFactory = limitedServerFactory(undefined, {
      idleTimeoutMs: 300,
      requestTimeoutMs: 300,
    });
    const { app, etcd } = await setup('admin', { restoreMs: 1_200, options: { serverFactory } });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const res = await fetch(`${url}${R.etcdRestore}`, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream' },
        body: Buffer.from('snapshot'),
      });
      assert.equal(res.status, 200, await res.clone().text());
      assert.deepEqual(etcd.calls, ['restore']);
    } finally {
      await app.close();
    }
  });

  it('refuses an oversize or empty upload, or one that is not a byte stream, without restoring', async () => {
    const { app, etcd, uploads } = await setup('admin', { maxSnapshotBytes: 1000 });
    const big = await app.inject({
      method: 'POST',
      url: R.etcdRestore,
      headers: { 'content-type': 'application/octet-stream' },
      payload: Buffer.alloc(1001),
    });
    assert.equal(big.statusCode, 413);
    assert.equal(code(big), ErrorCode.EtcdSnapshotTooLarge);
    const json = await app.inject({ method: 'POST', url: R.etcdRestore, payload: {} });
    assert.equal(code(json), ErrorCode.BadInput);
    const empty = await app.inject({
      method: 'POST',
      url: R.etcdRestore,
      headers: { 'content-type': 'application/octet-stream' },
      payload: Buffer.alloc(0),
    });
    assert.equal(code(empty), ErrorCode.BadInput);
    assert.deepEqual(etcd.calls, []);
    assert.deepEqual(await readdir(uploads), []);
  });

  it('sends a snapshot as bytes and a log as text lines, its tail bounded', async () => {
    const { app, etcd, services } = await setup('admin');
    etcd.snapshotBytes = new Uint8Array([0xed, 0xda, 0x0c, 0xed]);
    const snap = await app.inject({ method: 'POST', url: R.etcdSnapshot, payload: {} });
    assert.equal(snap.headers['content-type'], 'application/octet-stream');
    assert.deepEqual([...snap.rawPayload], [0xed, 0xda, 0x0c, 0xed]);
    services.logLines['etcd'] = ['one', 'two', 'three'];
    const logs = await app.inject({ method: 'GET', url: `${R.serviceLogs('etcd')}?tail=2` });
    assert.match(String(logs.headers['content-type']), /^text\/plain/);
    assert.equal(logs.body, 'two\nthree\n');
    assert.deepEqual(services.lastLogs, { name: 'etcd', tail: 2, follow: false });
    const tooMany = await app.inject({
      method: 'GET',
      url: `${R.serviceLogs('etcd')}?tail=${String(MaxLogTail + 1)}`,
    });
    assert.equal(code(tooMany), ErrorCode.BadInput);
    const typo = await app.inject({ method: 'GET', url: `${R.serviceLogs('etcd')}?folow=1` });
    assert.equal(code(typo), ErrorCode.BadInput);
  });
});
