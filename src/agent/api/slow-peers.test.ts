// SPDX-License-Identifier: Apache-2.0
// The agent's mTLS listener under silent, slow and greedy peers: a TCP connection that
// never says hello does not hold close() — and so a reboot — a slow-headers client is cut, and the
// connection cap refuses new peers while open ones keep working. Silent sockets from one address
// never keep the operator off the machine, the operator is served when other certificates fill
// the cap or past the per-peer cap, and a node certificate holds a bounded number of followers.
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { AgentRoutes } from '../../protocol/agent.ts';
import { createCa, issueCertificate } from '../../platform/pki/certificates.ts';
import { eventually } from '../../platform/process/managed-process.ts';
import {
  answer,
  client,
  itHoldsSlowPeers,
  openSocket,
  silentSocket,
  statusLine,
} from '../../testkit/slow-peers.ts';
import { createMemoryJournalStore } from '../ports/journal-store.fake.ts';
import { createFakeAgentService } from './service.fake.ts';
import { agentLimits, createAgentApi, type AgentApi } from './server.ts';
import type { ListenerLimits } from '../../platform/https/listener.ts';

const ca = await createCa();
const server = await issueCertificate({ ca, role: 'node', name: 'node-1' });
const as = async (role: 'node' | 'operator' | 'admin', name: string) => ({
  ca: ca.cert,
  ...(await issueCertificate({ ca, role, name })),
});
const [operator, admin, nodeA, nodeB] = await Promise.all([
  as('operator', 'operator-1'),
  as('admin', 'carol'),
  as('node', 'node-2'),
  as('node', 'node-3'),
]);

const start = (limits: Partial<ListenerLimits>): Promise<AgentApi> =>
  createAgentApi({
    service: createFakeAgentService(),
    journal: createMemoryJournalStore(),
    tls: { ca: ca.cert, ...server },
    limits,
  });

describe('the agent API under slow peers', () => {
  // Not the operator: its role is outside the cap this checks.
  itHoldsSlowPeers(start, admin);
});

describe('the agent API under greedy peers', () => {
  let api: AgentApi;
  const sockets: Socket[] = [];
  before(async () => {
    api = await start({});
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    await api.close();
  });

  it('answers the operator while one address holds as many silent sockets as the old cap', async () => {
    // Node's cap counted sockets at accept: 64 that never said hello kept the operator out.
    const count = agentLimits.maxConnections ?? 64;
    for (let i = 0; i < count; i++) sockets.push(await silentSocket(api.url));
    const op = client(api.url, operator);
    try {
      assert.equal((await answer(op, AgentRoutes.status)).status, 200);
    } finally {
      await op.destroy();
    }
  });

  it('answers the operator when other certificates fill the cap', async () => {
    const small = await start({ maxConnections: 2 });
    const clients = [nodeA, nodeB, admin, operator].map((tls) => client(small.url, tls));
    const [a, b, other, op] = clients as [
      ReturnType<typeof client>,
      ReturnType<typeof client>,
      ReturnType<typeof client>,
      ReturnType<typeof client>,
    ];
    try {
      assert.equal((await answer(a, AgentRoutes.status)).status, 200);
      assert.equal((await answer(b, AgentRoutes.status)).status, 200);
      const refused = await answer(other, AgentRoutes.status);
      assert.equal(refused.status, 503);
      assert.match(refused.body, /MOLT_CONNECTION_LIMIT/);
      assert.equal((await answer(op, AgentRoutes.status)).status, 200);
    } finally {
      await Promise.all(clients.map((c) => c.destroy()));
      await small.close();
    }
  });

  it('answers the operator past the per-peer cap, which holds every other certificate', async () => {
    // A burst of calls from the operator to the machine it upgrades: each on a connection of its
    // own, more than any other certificate may hold.
    const cap = agentLimits.maxConnectionsPerPeer ?? 16;
    const ops = Array.from({ length: cap + 4 }, () => client(api.url, operator));
    const admins = Array.from({ length: cap + 1 }, () => client(api.url, admin));
    try {
      for (const [i, op] of ops.entries())
        assert.equal((await answer(op, AgentRoutes.status)).status, 200, `operator call ${i}`);
      const statuses: number[] = [];
      for (const c of admins) statuses.push((await answer(c, AgentRoutes.status)).status);
      assert.deepEqual(statuses, [...Array<number>(cap).fill(200), 429]);
    } finally {
      await Promise.all([...ops, ...admins].map((c) => c.destroy()));
    }
  });

  it('holds a node certificate to its followers, not the operator', async () => {
    const limit = agentLimits.maxStreamsPerPeer ?? 8;
    const followers: Socket[] = [];
    const follow = async (tls: typeof nodeA): Promise<string> => {
      const socket = await openSocket(api.url, tls);
      sockets.push(socket);
      followers.push(socket);
      return statusLine(socket, api.url, `${AgentRoutes.logs}?follow=true`);
    };
    for (let i = 0; i < limit; i++) assert.match(await follow(nodeA), /^HTTP\/1\.1 200/);
    assert.match(await follow(nodeA), /^HTTP\/1\.1 429/);
    assert.match(await follow(operator), /^HTTP\/1\.1 200/);
    // A follower that leaves frees its place.
    followers[0]?.destroy();
    await eventually(async () => {
      assert.match(await follow(nodeA), /^HTTP\/1\.1 200/);
    });
  });
});
