// SPDX-License-Identifier: Apache-2.0
/**
 * A TCP proxy on loopback whose answers share one link of `bytesPerSecond`: what a registry looks
 * like from a site's machines across a real network, where the lab's loopback registry is nearly
 * free. Requests pass as they come; every byte back waits its turn on the one link, so two
 * machines pulling at once each get half of it.
 */
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ThrottledLink {
  /** `127.0.0.1:<port>`: the host to pull from. */
  readonly host: string;
  close(): Promise<void>;
}

export async function startThrottledLink(
  target: { host: string; port: number },
  bytesPerSecond: number,
): Promise<ThrottledLink> {
  /** When the link is next free (ms, performance clock), shared by every connection. */
  let free = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      upstream.pause();
      const now = performance.now();
      free = Math.max(free, now) + (chunk.length / bytesPerSecond) * 1000;
      void sleep(free - now).then(() => {
        if (client.write(chunk)) upstream.resume();
        else client.once('drain', () => upstream.resume());
      });
    });
    upstream.on('end', () => {
      // After the last chunk waited its turn.
      void sleep(Math.max(0, free - performance.now())).then(() => client.end());
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    host: `127.0.0.1:${String(port)}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((done) => server.close(done));
    },
  };
}
