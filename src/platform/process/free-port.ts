// SPDX-License-Identifier: Apache-2.0
import { createServer } from 'node:net';

/**
 * A TCP port on 127.0.0.1 that was free a moment ago. Prefer letting a server bind port 0 and
 * report its port; use this only for programs that cannot (etcd needs its URLs up front).
 */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => {
        resolve(port);
      });
    });
  });
}
