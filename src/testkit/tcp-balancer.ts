// SPDX-License-Identifier: Apache-2.0
/**
 * A small loopback TCP balancer, as an HA control plane puts a load balancer in front of its API
 * servers (docs/adr/0006 §10): each new connection goes to the next backend in turn that accepts
 * it; a backend that refuses (its machine is rebooting) is skipped. TLS passes through untouched,
 * so the API servers share one serving certificate. Connections to a backend that goes away are
 * closed, and the client reconnects — which is what "brief reconnects" means in P8.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface TcpBalancer {
  /** `127.0.0.1:<port>`. */
  readonly address: string;
  readonly port: number;
  /** Connections handed to each backend so far. */
  readonly handed: ReadonlyMap<number, number>;
  /** Cut every connection and refuse new ones until {@link TcpBalancer.up} (an outage). */
  down(): void;
  up(): void;
  close(): Promise<void>;
}

function dial(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.removeAllListeners('error');
      resolve(s);
    });
    s.once('error', reject);
  });
}

export async function startTcpBalancer(backends: readonly number[]): Promise<TcpBalancer> {
  const handed = new Map<number, number>(backends.map((b) => [b, 0]));
  const open = new Set<Socket>();
  let next = 0;
  const state = { down: false };
  const pick = async (): Promise<Socket | undefined> => {
    for (let tried = 0; tried < backends.length; tried++) {
      const port = backends[next++ % backends.length] ?? 0;
      const upstream = await dial(port).catch(() => undefined);
      if (upstream !== undefined) {
        handed.set(port, (handed.get(port) ?? 0) + 1);
        return upstream;
      }
    }
    return undefined;
  };
  const server: Server = createServer((client) => {
    if (state.down) {
      client.destroy();
      return;
    }
    client.pause();
    open.add(client);
    client.on('close', () => open.delete(client));
    client.on('error', () => client.destroy());
    void pick().then((upstream) => {
      if (upstream === undefined || client.destroyed) {
        upstream?.destroy();
        client.destroy();
        return;
      }
      open.add(upstream);
      upstream.on('close', () => {
        open.delete(upstream);
        client.destroy();
      });
      upstream.on('error', () => upstream.destroy());
      client.on('close', () => upstream.destroy());
      client.pipe(upstream).pipe(client);
      client.resume();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    address: `127.0.0.1:${String(port)}`,
    port,
    handed,
    down() {
      state.down = true;
      for (const s of open) s.destroy();
    },
    up() {
      state.down = false;
    },
    async close() {
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) =>
        server.close(() => {
          resolve();
        }),
      );
    },
  };
}
