// SPDX-License-Identifier: Apache-2.0
/**
 * {@link ControlPlaneHealth} through the cluster's API with @kubernetes/client-node (docs/adr/0012
 * §4): after a kube-apiserver step `/readyz` must answer 200 (client-node's `Health`); after a
 * controller-manager or scheduler step its leader Lease in kube-system must be renewed after the
 * step started — whichever machine leads, a renewal proves the component elected and works (no
 * Lease at all: leader election is off, and the agent's own health check is the gate). Polled
 * every second up to `timeoutMs`. `/metrics` is read with the kubeconfig's credentials
 * (`RequestContext`, as client-node's own `Health` does) for the removed-API check.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CoordinationV1Api,
  Health,
  HttpMethod,
  RequestContext,
  type KubeConfig,
} from '@kubernetes/client-node';
import { fetch } from 'undici';
import { errorMessage } from '../../../core/errors.ts';
import type { KubeComponent } from '../../../core/kubernetes/types.ts';
import { kubeError, statusOf } from '../../../platform/kube/client.ts';
import type { ControlPlaneHealth, HealthVerdict } from '../../ports/kube-health.ts';

export interface KubeHealthOptions {
  readonly kc: KubeConfig;
  /** How long a gate waits for health. @default 120000 */
  readonly timeoutMs?: number;
  /** Between looks. @default 1000 */
  readonly intervalMs?: number;
}

/** The leader Lease of each controller in kube-system. */
const leaseOf: Partial<Record<KubeComponent, string>> = {
  'kube-controller-manager': 'kube-controller-manager',
  'kube-scheduler': 'kube-scheduler',
};

async function rawGet(kc: KubeConfig, path: string): Promise<string> {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new Error('the kubeconfig names no cluster');
  const url = `${cluster.server}${path}`;
  const ctx = new RequestContext(url, HttpMethod.GET);
  await kc.applySecurityAuthentication(ctx);
  const res = await fetch(url, {
    headers: ctx.getHeaders(),
    dispatcher: ctx.getDispatcher() as never,
    signal: AbortSignal.timeout(10_000),
  });
  if (res.status !== 200) throw new Error(`GET ${path} answered ${String(res.status)}`);
  return res.text();
}

export function createKubeHealth(o: KubeHealthOptions): ControlPlaneHealth {
  const health = new Health(o.kc);
  const leases = o.kc.makeApiClient(CoordinationV1Api);
  const timeoutMs = o.timeoutMs ?? 120_000;
  const intervalMs = o.intervalMs ?? 1_000;
  const look = async (component: KubeComponent, since: number): Promise<HealthVerdict> => {
    const lease = leaseOf[component];
    if (lease === undefined) {
      const ready = await health.readyz({ signal: AbortSignal.timeout(10_000) });
      return ready
        ? { ok: true, message: '/readyz is ok' }
        : { ok: false, message: '/readyz is not ok' };
    }
    const l = await leases
      .readNamespacedLease({ name: lease, namespace: 'kube-system' })
      .catch((e: unknown) => {
        if (statusOf(e) === 404) return undefined;
        throw e;
      });
    // Leader election off (one machine, the lab): no Lease to watch; the agent's health stands.
    if (l === undefined)
      return {
        ok: true,
        message: `no ${lease} Lease (leader election off): the agent's health check stands`,
      };
    const renewed = l.spec?.renewTime === undefined ? 0 : new Date(l.spec.renewTime).getTime();
    return renewed > since
      ? { ok: true, message: `the ${lease} Lease was renewed by ${l.spec?.holderIdentity ?? '?'}` }
      : { ok: false, message: `the ${lease} Lease was not renewed since the step started` };
  };
  return {
    async afterApply({ component, since }) {
      const deadline = Date.now() + timeoutMs;
      let last: HealthVerdict = { ok: false, message: 'not looked at' };
      while (Date.now() < deadline) {
        last = await look(component, since).catch((e: unknown) => ({
          ok: false,
          message: errorMessage(e),
        }));
        if (last.ok) return last;
        await sleep(intervalMs);
      }
      return {
        ok: false,
        message: `${last.message} (after ${String(Math.round(timeoutMs / 1000))} s)`,
      };
    },
    async metrics() {
      try {
        return await rawGet(o.kc, '/metrics');
      } catch (e) {
        throw kubeError(e, "read the API server's /metrics");
      }
    },
  };
}
