// SPDX-License-Identifier: Apache-2.0
/**
 * The hosted kube-apiserver is ready (`/readyz` answers 200: etcd reachable, its controllers and
 * caches started): a control-plane machine whose API server does not serve must not commit its
 * new slot. `/readyz` is open to unauthenticated callers (system:public-info-viewer); the lab's
 * serving certificate is not checked here — this is the machine asking itself over loopback.
 */
import { request } from 'node:https';
import type { HealthCheck } from '../../ports/health-check.ts';

function readyz(port: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/readyz', rejectUnauthorized: false, timeout: 2_000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, body });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

export function apiserverReady(port: number): HealthCheck {
  const name = 'kube-apiserver';
  return {
    name,
    async run() {
      try {
        const r = await readyz(port);
        return r.status === 200
          ? { name, status: 'ok', message: `ready on port ${String(port)}` }
          : {
              name,
              status: 'failing',
              message: `/readyz ${String(r.status)}: ${r.body.slice(0, 200)}`,
            };
      } catch (e) {
        return { name, status: 'failing', message: `not answering: ${(e as Error).message}` };
      }
    },
  };
}
