// SPDX-License-Identifier: Apache-2.0
// The agent's mTLS listener under silent and slow peers (issue 14): a TCP connection that never
// says hello does not hold close() — and so a reboot — a slow-headers client is cut, and the
// connection cap refuses new peers while open ones keep working.
import { describe } from 'node:test';
import { createCa, issueCertificate } from '../../platform/pki/certificates.ts';
import { itHoldsSlowPeers } from '../../testkit/slow-peers.ts';
import { createMemoryJournalStore } from '../ports/journal-store.fake.ts';
import { createFakeAgentService } from './service.fake.ts';
import { createAgentApi } from './server.ts';

const ca = await createCa();
const server = await issueCertificate({ ca, role: 'node', name: 'node-1' });
const operator = await issueCertificate({ ca, role: 'operator', name: 'alice' });

describe('the agent API under slow peers', () => {
  itHoldsSlowPeers(
    (limits) =>
      createAgentApi({
        service: createFakeAgentService(),
        journal: createMemoryJournalStore(),
        tls: { ca: ca.cert, ...server },
        limits,
      }),
    { ca: ca.cert, ...operator },
  );
});
