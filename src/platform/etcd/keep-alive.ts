// SPDX-License-Identifier: Apache-2.0
/**
 * Keeping an etcd lease alive by its id. etcd3's `Lease` class can only keep alive a lease it
 * granted itself and hides the TTL-0 answer; after a restart or a reboot the agent must keep alive
 * a lease granted by its previous process, and the operator must see its leader lease expire, so
 * molt sends `LeaseKeepAlive` requests for a lease id directly (verified on etcd 3.4.23: any client
 * can renew any lease id; an expired id answers TTL 0).
 */
import type { Etcd3 } from 'etcd3';
import type { ToMoltError } from './client.ts';
import { settleWithin } from './settle-within.ts';

/**
 * Renew `leaseId` once; resolves with the remaining TTL in seconds (0: the lease is gone). A stream
 * error is normalised with the daemon's `toMoltError`; no answer within `timeoutMs` is a plain Error.
 */
export async function keepAliveOnce(
  client: Etcd3,
  leaseId: string,
  timeoutMs: number,
  toMoltError: ToMoltError,
): Promise<number> {
  // The deadline covers getting the stream too: etcd3 hands it out through the host's circuit
  // breaker, which (half-open) makes a caller wait for another call's outcome; a renewal that
  // never settles would keep a lost leader from ever campaigning again.
  const late = (): Error =>
    new Error(`no keep-alive answer for lease ${leaseId} within ${timeoutMs} ms`);
  const until = Date.now() + timeoutMs;
  const opened = client.leaseClient.leaseKeepAlive();
  const stream = await settleWithin(opened, timeoutMs, late);
  try {
    const ttl = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => {
          reject(late());
        },
        Math.max(0, until - Date.now()),
      );
      stream.on('data', (res: { TTL: string }) => {
        clearTimeout(timer);
        resolve(res.TTL);
      });
      stream.on('error', (e: unknown) => {
        clearTimeout(timer);
        reject(toMoltError(e, `keep-alive of lease ${leaseId}`));
      });
      stream.write({ ID: leaseId });
    });
    return Number(ttl);
  } finally {
    stream.end();
  }
}

/** A running keep-alive loop for one lease. */
export interface KeepAliveLoop {
  readonly leaseId: string;
  stop(): void;
}

/**
 * Renew `leaseId` every `everyMs` until stopped. Failed renewals are retried at the next tick (the
 * lease's TTL, not the client, decides when it is lost); a TTL-0 answer means it is gone: the loop
 * stops and `onLost` is called.
 */
export function startKeepAlive(a: {
  readonly client: Etcd3;
  readonly leaseId: string;
  readonly everyMs: number;
  readonly onLost: (leaseId: string) => void;
  readonly toMoltError: ToMoltError;
}): KeepAliveLoop {
  let busy = false;
  const tick = async (): Promise<void> => {
    if (busy) return;
    busy = true;
    try {
      if ((await keepAliveOnce(a.client, a.leaseId, a.everyMs, a.toMoltError)) <= 0) {
        clearInterval(timer);
        a.onLost(a.leaseId);
      }
    } catch {
      // Unreachable or no quorum: try again next tick; the key lives until its TTL runs out.
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void tick(), a.everyMs);
  timer.unref();
  return {
    leaseId: a.leaseId,
    stop: () => {
      clearInterval(timer);
    },
  };
}
