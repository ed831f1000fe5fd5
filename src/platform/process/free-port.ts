// SPDX-License-Identifier: Apache-2.0
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * The lowest port the kernel hands out to outgoing connections (`ip_local_port_range`). A port
 * a program listens on later must come from below it: a port the kernel picked for port 0 is an
 * ephemeral one, and any connection on the machine may take it as its local port before the
 * program binds it — which a restarted component then meets as "address already in use".
 */
function ephemeralLow(): number {
  try {
    const low = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0],
    );
    return Number.isInteger(low) && low > 2048 ? low : 32768;
  } catch {
    return 32768;
  }
}

const Low = 1024;
const High = ephemeralLow() - 1;

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => {
      resolve(false);
    });
    server.listen(port, '127.0.0.1', () => {
      server.close(() => {
        resolve(true);
      });
    });
  });
}

/**
 * A TCP port on 127.0.0.1 that was free a moment ago, below the kernel's ephemeral range (see
 * {@link ephemeralLow}), chosen at random so that processes asking at once rarely meet. Prefer
 * letting a server bind port 0 and report its port; use this only for programs that cannot (etcd
 * needs its URLs up front) or that must keep their port across restarts.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = Low + Math.floor(Math.random() * (High - Low + 1));
    if (await bindable(port)) return port;
  }
  throw new Error(`no free TCP port on 127.0.0.1 from ${String(Low)} to ${String(High)}`);
}
