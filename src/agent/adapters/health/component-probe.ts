// SPDX-License-Identifier: Apache-2.0
/**
 * {@link ComponentProbe} over loopback HTTPS: kube-apiserver is ready when `/readyz` answers 200
 * (etcd reachable, its controllers and caches started); kube-controller-manager and
 * kube-scheduler when `/healthz` on their secure port does. Both paths are open to
 * unauthenticated callers (the API server's system:public-info-viewer; the others'
 * `--authorization-always-allow-paths`). Serving certificates are not checked: this is the machine
 * asking itself, and the components' certificates are often self-signed (`--cert-dir`).
 * Also the runner's health checks: a machine whose components do not serve must not commit its
 * new slot.
 */
import { request } from 'node:https';
import type { ComponentProbe, ProbeResult } from '../../ports/control-plane.ts';
import type { HealthCheck } from '../../ports/health-check.ts';
import { accepts } from '../process-service/pid.ts';

function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, rejectUnauthorized: false, timeout: 2_000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (body.length < 4096) body += chunk;
        });
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

/** The path a component's health is asked on. */
export const healthPath = (name: string): string =>
  name === 'kube-apiserver' ? '/readyz' : '/healthz';

export const httpsComponentProbe: ComponentProbe = {
  async healthy(name, port): Promise<ProbeResult> {
    const path = healthPath(name);
    try {
      const r = await get(port, path);
      return r.status === 200
        ? { ok: true, message: `${path} ok on port ${String(port)}` }
        : { ok: false, message: `${path} ${String(r.status)}: ${r.body.slice(0, 300)}` };
    } catch (e) {
      return { ok: false, message: `${path} not answering: ${(e as Error).message}` };
    }
  },
  listening: (port) => accepts(`tcp://127.0.0.1:${String(port)}`),
};

/** One health check per component, in the runner's list. */
export function componentHealthChecks(
  components: readonly { readonly name: string; readonly port: number }[],
  probe: ComponentProbe = httpsComponentProbe,
): HealthCheck[] {
  return components.map(({ name, port }) => ({
    name,
    async run() {
      const r = await probe.healthy(name, port);
      return { name, status: r.ok ? 'ok' : 'failing', message: r.message };
    },
  }));
}
