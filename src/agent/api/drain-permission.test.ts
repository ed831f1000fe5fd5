// SPDX-License-Identifier: Apache-2.0
// Force-delete drains are the machine's call: an operator certificate asking
// for `onTimeout: force-delete` is refused before the operation is accepted, unless the machine's
// own config allows it; admin may by default; `deny` refuses everyone.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../core/errors.ts';
import type { Role } from '../../protocol/agent.ts';
import { MachineConfig } from '../../protocol/machine-config.ts';
import { createMemoryJournalStore } from '../ports/journal-store.fake.ts';
import { forceDeleteGrantOf, type ForceDeleteGrant } from './drain-permission.ts';
import { buildAgentApp } from './routes.ts';
import { createFakeAgentService } from './service.fake.ts';

/** The grant of a machine config with Kubernetes and this `drain` section. */
const grantFor = (drain: Record<string, unknown> = {}): ForceDeleteGrant =>
  forceDeleteGrantOf(
    MachineConfig.parse({
      node: 'w1',
      role: 'worker',
      bootloader: 'grub',
      kubernetes: { kubeconfig: '/k', drain },
    }).kubernetes,
  );

async function ask(role: Role, grant: ForceDeleteGrant | undefined, onTimeout = 'force-delete') {
  const service = createFakeAgentService();
  const app = buildAgentApp({
    service,
    journal: createMemoryJournalStore(),
    identify: () => ({ name: `${role}-1`, role }),
    ...(grant !== undefined && { forceDelete: grant }),
  });
  const res = await app.inject({
    method: 'POST',
    url: '/v1/upgrade',
    payload: { image: 'reg/os:2.0.0', drain: { timeoutSeconds: 30, onTimeout } },
  });
  return { status: res.statusCode, body: res.json<Record<string, string>>(), service };
}

describe('force-delete drains on request', () => {
  it('refuses an operator certificate on a machine with the default config, before accepting anything', async () => {
    for (const grant of [undefined, grantFor()]) {
      const { status, body, service } = await ask('operator', grant);
      assert.equal(status, 403);
      assert.equal(body['code'], ErrorCode.Forbidden);
      assert.match(body['message'] ?? '', /operator-1 \(role operator\).*force-delete/);
      assert.match(body['hint'] ?? '', /forceDelete: allow/);
      assert.deepEqual(service.submitted, [], 'nothing was submitted to the runner');
    }
  });

  it('lets an admin certificate ask by default', async () => {
    assert.equal((await ask('admin', grantFor())).status, 202);
  });

  it('lets an operator certificate ask when the machine config allows it', async () => {
    assert.equal((await ask('operator', grantFor({ forceDelete: 'allow' }))).status, 202);
  });

  it('refuses even an admin when the machine config denies it', async () => {
    const { status, body } = await ask('admin', grantFor({ forceDelete: 'deny' }));
    assert.equal(status, 403);
    assert.match(body['hint'] ?? '', /never force-deletes/);
  });

  it('lets an operator ask for what the machine does anyway, and for the other actions', async () => {
    const own = grantFor({ onTimeout: 'force-delete' });
    assert.equal((await ask('operator', own)).status, 202);
    assert.equal((await ask('operator', grantFor(), 'quarantine-and-skip')).status, 202);
  });

  it('asks nothing of a machine outside a cluster (nothing is drained there)', async () => {
    assert.equal((await ask('operator', forceDeleteGrantOf(undefined))).status, 202);
  });
});
