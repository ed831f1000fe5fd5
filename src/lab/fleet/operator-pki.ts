// SPDX-License-Identifier: Apache-2.0
/**
 * The operator's PKI section for a lab fleet's CA directory: its client certificate (`operator`,
 * issued with the fleet) to call the agents, and a server certificate (`operator-api`, issued here)
 * for the API it serves. Shared by `molt lab` and the tests that run the real operator process.
 */
import { join } from 'node:path';
import { issueToDir } from '../../platform/pki/store.ts';
import type { OperatorConfigInput } from '../../protocol/operator-config.ts';

/**
 * The person at the lab's CLI (its context and `molt lab env`): an admin certificate of its own, so
 * the history tells what a person did (`by lab-admin`) from what the operator did itself (`by
 * operator`), as on a real fleet where nobody borrows the operator's key.
 */
export const LabAdmin = { name: 'lab-admin', cert: 'lab-admin.pem', key: 'lab-admin.key' } as const;

/** Issue the lab person's admin certificate into the fleet's CA directory. */
export async function issueLabAdminCert(pki: string): Promise<void> {
  await issueToDir({
    caDir: pki,
    outDir: pki,
    role: 'admin',
    name: LabAdmin.name,
    sans: [],
    days: 30,
  });
}

export async function issueOperatorApiCert(pki: string): Promise<OperatorConfigInput['pki']> {
  await issueToDir({
    caDir: pki,
    outDir: pki,
    role: 'node',
    name: 'operator-api',
    sans: [],
    days: 30,
  });
  return {
    ca: join(pki, 'ca.pem'),
    cert: join(pki, 'operator.pem'),
    key: join(pki, 'operator.key'),
    serverCert: join(pki, 'operator-api.pem'),
    serverKey: join(pki, 'operator-api.key'),
  };
}
