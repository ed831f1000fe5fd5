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

/**
 * The ports below the ephemeral range that fetch refuses to connect to (the WHATWG Fetch
 * standard's "bad ports", which Node's fetch follows): a server there is unreachable for molt's
 * own clients. The list is the standard's; nothing here can ask fetch for it.
 */
export const FetchBlockedPorts: ReadonlySet<number> = new Set([
  1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669,
  6679, 6697, 10080,
]);

/** A candidate port from `random()` in [0, 1): in range, and one fetch will connect to. */
export function candidatePort(random: () => number): number | undefined {
  const port = Low + Math.floor(random() * (High - Low + 1));
  return FetchBlockedPorts.has(port) ? undefined : port;
}

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
    const port = candidatePort(Math.random);
    if (port !== undefined && (await bindable(port))) return port;
  }
  throw new Error(`no free TCP port on 127.0.0.1 from ${String(Low)} to ${String(High)}`);
}
