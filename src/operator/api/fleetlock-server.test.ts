// SPDX-License-Identifier: Apache-2.0
// The anonymous FleetLock listener over a real socket: it serves only the ids of
// `fleetLock.clients`, each in its group, with its token where one is set — as a Bearer header or
// in Zincati's base_url — so nobody releases another node's slot or takes one for a made-up id.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { MemoryFleetLockStore } from '../adapters/memory-fleetlock/store.ts';
import type { ListeningApi } from '../../platform/https/server.ts';
import { createFleetLockServer } from './fleetlock-server.ts';

const token = 'c2VjcmV0LXRva2VuLWZvci1mY29zLTE';
const sha = createHash('sha256').update(token).digest('hex');
const store = new MemoryFleetLockStore();
let server: ListeningApi;

before(async () => {
  server = await createFleetLockServer({
    deps: {
      fleetLock: { store, groups: (g) => (g === 'workers' ? { slots: 2 } : undefined) },
      now: () => Date.now(),
    },
    clients: [
      { id: 'fcos-1', group: 'workers', tokenSha256: sha },
      { id: 'fcos-2', group: 'workers' },
    ],
    tls: undefined,
    host: '127.0.0.1',
    port: 0,
  });
});
after(async () => {
  await server.close();
});

async function call(
  step: 'pre-reboot' | 'steady-state',
  id: string,
  o: { group?: string; base?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; kind: string | undefined }> {
  const res = await fetch(`${o.base ?? server.url}/v1/${step}`, {
    method: 'POST',
    headers: { 'fleet-lock-protocol': 'true', ...o.headers },
    body: JSON.stringify({ client_params: { id, group: o.group ?? 'workers' } }),
  });
  const text = await res.text();
  return {
    status: res.status,
    kind: text === '' ? undefined : (JSON.parse(text) as { kind: string }).kind,
  };
}

const holders = async (): Promise<readonly string[] | undefined> =>
  (await store.read('workers')).sem?.holders;

describe('the anonymous FleetLock listener', () => {
  it('refuses an id the operator does not list, so a made-up id takes no slot', async () => {
    assert.deepEqual(await call('pre-reboot', 'made-up'), { status: 403, kind: 'forbidden' });
    assert.equal(await holders(), undefined);
  });

  it('refuses a listed id in another group', async () => {
    assert.deepEqual(await call('pre-reboot', 'fcos-2', { group: 'default' }), {
      status: 403,
      kind: 'forbidden',
    });
  });

  it('needs the token of an id that has one: Bearer, or in the base URL (Zincati)', async () => {
    assert.equal((await call('pre-reboot', 'fcos-1')).status, 403);
    const wrong = { authorization: 'Bearer not-the-token' };
    assert.equal((await call('pre-reboot', 'fcos-1', { headers: wrong })).status, 403);
    const bearer = { authorization: `Bearer ${token}` };
    assert.equal((await call('pre-reboot', 'fcos-1', { headers: bearer })).status, 200);
    const inUrl = `${server.url}/token/${token}`;
    assert.equal((await call('pre-reboot', 'fcos-1', { base: inUrl })).status, 200);
    assert.equal(
      (await call('pre-reboot', 'fcos-1', { base: `${server.url}/token/x` })).status,
      403,
    );
    assert.deepEqual(await holders(), ['fcos-1']);
  });

  it('lets nobody else release a slot: not another listed id, not the id without its token', async () => {
    assert.equal((await call('steady-state', 'fcos-1')).status, 403);
    assert.equal(
      (await call('steady-state', 'fcos-1', { headers: { authorization: 'Bearer x' } })).status,
      403,
    );
    assert.deepEqual(await holders(), ['fcos-1']);
    assert.equal(
      (await call('steady-state', 'fcos-1', { base: `${server.url}/token/${token}` })).status,
      200,
    );
    assert.deepEqual(await holders(), []);
  });
});
