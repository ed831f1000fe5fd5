// SPDX-License-Identifier: Apache-2.0
/**
 * Agent APIs over mutual TLS whose recovery routes (docs/adr/0012 §6) reach fakes — services by
 * name and an etcd member — with a fleet CA and admin and operator certificates in a temp
 * directory, for in-process tests of `molt node service|etcd` and `molt cluster recover` (tests only).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createFakeAgentService } from '../agent/api/service.fake.ts';
import { createAgentApi, type AgentApi } from '../agent/api/server.ts';
import {
  createFakeEtcdRecovery,
  type FakeEtcdRecovery,
} from '../agent/ports/etcd-recovery.fake.ts';
import { createMemoryJournalStore } from '../agent/ports/journal-store.fake.ts';
import {
  createFakeServiceControl,
  type FakeServiceControl,
} from '../agent/ports/service-control.fake.ts';
import { createCa, issueCertificate } from '../platform/pki/certificates.ts';
import { tempDir } from '../platform/process/managed-process.ts';

export interface RecoveryAgent {
  readonly name: string;
  readonly api: AgentApi;
  readonly services: FakeServiceControl;
  readonly etcd: FakeEtcdRecovery;
}

export interface RecoveryAgents {
  readonly agents: readonly RecoveryAgent[];
  readonly dir: string;
  /** `--ca --cert --key` of `who` (`admin` or `operator`). */
  flags(who: 'admin' | 'operator'): string[];
  close(): Promise<void>;
}

/** Start one agent per name (`cp-1`, …), each seeing itself as that etcd member. */
export async function startRecoveryAgents(names: readonly string[]): Promise<RecoveryAgents> {
  const dir = await tempDir('cli-recovery');
  const ca = await createCa();
  await writeFile(join(dir.path, 'ca.pem'), ca.cert);
  for (const role of ['admin', 'operator'] as const) {
    const pair = await issueCertificate({ ca, role, name: role });
    await writeFile(join(dir.path, `${role}.pem`), pair.cert);
    await writeFile(join(dir.path, `${role}.key`), pair.key, { mode: 0o600 });
  }
  const agents: RecoveryAgent[] = [];
  for (const name of names) {
    const services = createFakeServiceControl();
    const etcd = createFakeEtcdRecovery(name);
    const tls = { ca: ca.cert, ...(await issueCertificate({ ca, role: 'node', name })) };
    const api = await createAgentApi({
      service: createFakeAgentService(),
      journal: createMemoryJournalStore(),
      tls,
      recovery: { services, etcd, uploadDir: join(dir.path, name, 'tmp') },
    });
    agents.push({ name, api, services, etcd });
  }
  return {
    agents,
    dir: dir.path,
    flags: (who) => [
      ...['--ca', join(dir.path, 'ca.pem')],
      ...['--cert', join(dir.path, `${who}.pem`), '--key', join(dir.path, `${who}.key`)],
    ],
    async close() {
      await Promise.all(agents.map((a) => a.api.close()));
      await dir.remove();
    },
  };
}
