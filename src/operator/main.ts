// SPDX-License-Identifier: Apache-2.0
/**
 * Composition root of `molt operator --config FILE` (docs/adr/0005 §4, STYLE §1): the only file
 * that chooses adapters. It loads the config and fleet file, opens the store and leader election
 * (etcd, or in memory for demos), syncs the fleet file's machines into the store, and runs the
 * reconcile loop until SIGINT/SIGTERM, then resigns leadership so a standby takes over at once.
 */
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { ErrorCode, MoltError } from '../core/errors.ts';
import { createAgentGateway } from './adapters/agent-gateway/index.ts';
import { createEtcdLeadership } from './adapters/etcd-leadership/leadership.ts';
import { createEtcdOperatorStore } from './adapters/etcd-store/operator-store.ts';
import { createReleaseSource, machineRecords, syncInventory } from './compose.ts';
import { loadOperatorConfig, type LoadedConfig } from './config.ts';
import type { Leadership } from './ports/leadership.ts';
import { createFakeLeadership, FakeLeadershipBackend } from './ports/leadership.fake.ts';
import type { OperatorStore } from './ports/store.ts';
import { InMemoryOperatorStore } from './ports/store.fake.ts';
import { startOperatorLoop } from './runtime/loop.ts';

export interface OperatorIo {
  out(text: string): void;
  err(text: string): void;
}

const usage = 'usage: molt operator --config FILE';

function flags(argv: readonly string[]): { config: string } {
  let values: { config?: string | undefined; help?: boolean | undefined };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: { config: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
    }));
  } catch (e) {
    throw new MoltError(ErrorCode.BadFlag, (e as Error).message, { hint: usage });
  }
  if (values.config === undefined)
    throw new MoltError(ErrorCode.BadFlag, '--config is required', { hint: usage });
  return { config: values.config };
}

/**
 * `store: memory` keeps state in this process only (a demo or a test: a restart forgets the
 * rollouts); the in-memory store and election are the ones the conformance suites hold to the
 * etcd adapters' behaviour.
 */
function stateOf(c: LoadedConfig, id: string): { store: OperatorStore; leadership: Leadership } {
  const store = c.config.store;
  if (store === 'memory')
    return {
      store: new InMemoryOperatorStore(),
      leadership: createFakeLeadership(new FakeLeadershipBackend(), id),
    };
  return {
    store: createEtcdOperatorStore({ endpoints: store.etcd }),
    leadership: createEtcdLeadership({
      endpoints: store.etcd,
      id,
      ttlSeconds: Math.max(1, Math.round(c.config.leaderTtl / 1000)),
    }),
  };
}

async function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const)
      process.once(signal, () => {
        resolve(signal);
      });
  });
}

/** Run `molt operator`; resolves with the exit code after a signal. */
export async function runOperatorCommand(argv: readonly string[], io: OperatorIo): Promise<number> {
  const { config: path } = flags(argv);
  const c = await loadOperatorConfig(path);
  const id = c.config.id ?? `${hostname()}-${String(process.pid)}`;
  const { store, leadership } = stateOf(c, id);
  const agents = createAgentGateway(c.pki);
  const log = (line: string): void => {
    io.out(`${new Date().toISOString()} ${line}\n`);
  };
  await syncInventory(store, machineRecords(c.fleet, c.fleetFile));
  const loop = startOperatorLoop(
    {
      store,
      agents,
      releases: createReleaseSource({
        registry: c.config.registry,
        repository: c.config.repository,
        insecure: c.config.insecure,
        ...(c.publicKeyPem !== undefined && { publicKeyPem: c.publicKeyPem }),
      }),
      settings: {
        pools: c.fleet.pools,
        fleetPolicies: c.fleet.fleetPolicies,
        imageFor: (digest) => `${c.config.registry}/${c.config.repository}@${digest}`,
        unreachableFailMs: c.config.unreachableFail,
        discoverEveryMs: c.config.discoverEvery,
        ...(c.publicKeyPem !== undefined && { requireSignature: true }),
      },
      now: () => Date.now(),
      log,
    },
    leadership,
    { intervalMs: c.config.interval },
  );
  log(
    `molt operator ${id}: ${String(c.fleet.machines.length)} machines, ${String(c.fleet.pools.length)} pools`,
  );
  const signal = await untilSignal();
  log(`${signal}: stopping`);
  await loop.stop();
  await Promise.all([agents.close(), store.close(), leadership.close()]);
  return 0;
}
