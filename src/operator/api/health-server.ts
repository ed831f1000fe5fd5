// SPDX-License-Identifier: Apache-2.0
/**
 * The probe listener (config `health.listen`): what the kubelet, a load balancer or systemd's
 * watchdog scripts ask, on plain HTTP because a probe presents no client certificate. It serves
 * exactly two answers and no data:
 *
 * - `GET /healthz` (liveness): 200 while the process answers at all. It does not look at the store,
 *   so an API server or etcd outage never turns into a restart storm of every replica.
 * - `GET /readyz` (readiness): 200 when the store answers a cheap read (its history head) within
 *   {@link READY_DEADLINE_MS}, else 503 with the failure's stable code — a replica that cannot
 *   reach its state takes no API or dashboard traffic. Both replicas of a leader-elected pair are
 *   ready; which one leads is in the body (`leader`), not in the status, so the Service keeps
 *   sending reads to the standby.
 *
 * Nothing here names the store's endpoints or any error text: the listener is meant for a pod
 * network or loopback, but it authenticates nobody.
 */
import { ErrorCode, isMoltError } from '../../core/errors.ts';
import { createApiApp } from '../../platform/https/app.ts';
import { limitedServerFactory, type ListenerLimits } from '../../platform/https/listener.ts';
import { listenUrl, type ListeningApi } from '../../platform/https/server.ts';
import { errorAnswer } from './errors.ts';

/** How long the readiness read may take before the replica counts as not ready. */
export const READY_DEADLINE_MS = 3_000;

/** What the probes look at. */
export interface HealthDeps {
  /** A cheap read of the store (its history head): it answers, or the replica is not ready. */
  readonly storeAnswers: () => Promise<unknown>;
  readonly isLeader: () => boolean;
}

/** Options of {@link createHealthServer}. */
export interface HealthServerOptions {
  readonly deps: HealthDeps;
  readonly host: string;
  readonly port: number;
  /** @default {@link healthLimits} over the listener defaults */
  readonly limits?: Partial<ListenerLimits> | undefined;
  readonly onInternalError?: ((error: unknown) => void) | undefined;
}

/** Probes are few and short: a small cap keeps a flood on this port from costing the operator. */
export const healthLimits: Partial<ListenerLimits> = {
  maxConnections: 64,
  maxConnectionsPerPeer: 16,
};

/** The readiness answer: the store answered (with who leads), or why not as a stable code. */
export type Readiness =
  | { readonly ready: true; readonly leader: boolean }
  | { readonly ready: false; readonly leader: boolean; readonly code: string };

/** Ask the store once, within `deadlineMs`. */
export async function readiness(
  deps: HealthDeps,
  deadlineMs = READY_DEADLINE_MS,
): Promise<Readiness> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<typeof ErrorCode.TimedOut>((done) => {
    timer = setTimeout(() => {
      done(ErrorCode.TimedOut);
    }, deadlineMs);
  });
  const answered = deps.storeAnswers().then(
    () => undefined,
    // A store failure that is not molt's own is still the store being unreachable.
    (e: unknown) => (isMoltError(e) ? e.code : ErrorCode.StoreUnavailable),
  );
  try {
    const code = await Promise.race([answered, late]);
    const leader = deps.isLeader();
    return code === undefined ? { ready: true, leader } : { ready: false, leader, code };
  } finally {
    clearTimeout(timer);
  }
}

/** Start the probe listener (plain HTTP). */
export async function createHealthServer(o: HealthServerOptions): Promise<ListeningApi> {
  const app = createApiApp({
    name: 'operator probe listener',
    errorAnswer,
    onInternalError: o.onInternalError,
    serverFactory: limitedServerFactory(undefined, { ...healthLimits, ...o.limits }),
  });
  app.get('/healthz', async (_request, reply) => reply.type('text/plain').send('ok\n'));
  app.get('/readyz', async (_request, reply) => {
    const r = await readiness(o.deps);
    return reply.code(r.ready ? 200 : 503).send(r);
  });
  await app.listen({ host: o.host, port: o.port });
  return { url: listenUrl(app, o.host, 'http'), close: () => app.close() };
}
