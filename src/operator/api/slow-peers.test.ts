// SPDX-License-Identifier: Apache-2.0
// Every operator listener under silent and slow peers: the mTLS API, the dashboard's
// and FleetLock's (over TLS and plain HTTP). A TCP connection that never says hello does not hold
// close() — an operator restart or failover — a slow-headers client is cut, and the connection cap
// refuses new peers while open ones keep working.
import { describe } from 'node:test';
import { createCa, issueCertificate } from '../../platform/pki/certificates.ts';
import { apiFixture } from '../../testkit/operator-api-fixture.ts';
import { itHoldsSlowPeers } from '../../testkit/slow-peers.ts';
import { createDashboardServer } from './dashboard-server.ts';
import { createFleetLockServer } from './fleetlock-server.ts';
import { createOperatorApi } from './server.ts';

const anonymous = { users: [], anonymousRead: true, sessionTtl: 3_600_000 };

const ca = await createCa();
const server = await issueCertificate({ ca, role: 'node', name: 'operator-1' });
// Not an operator certificate: that role is outside the cap these checks reach.
const admin = await issueCertificate({ ca, role: 'admin', name: 'carol' });
const { deps } = await apiFixture();
const at = { host: '127.0.0.1', port: 0 };

describe('the operator API under slow peers', () => {
  itHoldsSlowPeers(
    (limits) => createOperatorApi({ deps, tls: { ca: ca.cert, ...server }, ...at, limits }),
    { ca: ca.cert, ...admin },
  );
});

for (const [name, tls] of [
  ['TLS', server],
  ['plain HTTP', undefined],
] as const) {
  const client = tls === undefined ? undefined : { ca: ca.cert };

  describe(`the dashboard listener over ${name} under slow peers`, () => {
    itHoldsSlowPeers(
      (limits) => createDashboardServer({ deps, access: anonymous, tls, ...at, limits }),
      client,
    );
  });

  describe(`the FleetLock listener over ${name} under slow peers`, () => {
    itHoldsSlowPeers(
      (limits) => createFleetLockServer({ deps, tls, ...at, clients: [], limits }),
      client,
    );
  });
}
