// SPDX-License-Identifier: Apache-2.0
/**
 * Who may ask this machine for a `force-delete` drain (docs/adr/0004 §6): deleting pods
 * past their PodDisruptionBudgets with grace 0 is the machine owner's call, so the machine's own
 * config (`kubernetes.drain.forceDelete`) decides, not the operator's. An upgrade request asking
 * for it beyond what the config permits for the caller's role is refused with MOLT_FORBIDDEN
 * before the operation is accepted — before anything is cordoned or drained.
 */
import type { DrainTimeoutAction } from '../../core/drain/pods.ts';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { Identity } from '../../platform/https/identity.ts';
import type { UpgradeRequestBody } from '../../protocol/agent.ts';
import type { ForceDeletePolicy } from '../../protocol/machine-config.ts';

/** The machine's side of the decision, from its config. */
export interface ForceDeleteGrant {
  /** `kubernetes.drain.forceDelete`. */
  readonly forceDelete: ForceDeletePolicy;
  /** The config's own `onTimeout`: a request asking for what the machine does anyway asks nothing. */
  readonly machineOnTimeout?: DrainTimeoutAction | undefined;
}

/** Without a Kubernetes section nothing is drained, so a drain policy asks for nothing. */
export const noClusterGrant: ForceDeleteGrant = { forceDelete: 'allow' };

/** The default of a machine with Kubernetes: admin only. */
export const defaultForceDeleteGrant: ForceDeleteGrant = { forceDelete: 'admin' };

/** The grant of a machine config's `kubernetes` section (undefined: not in a cluster). */
export function forceDeleteGrantOf(
  kubernetes:
    | {
        readonly drain: {
          readonly onTimeout: DrainTimeoutAction;
          readonly forceDelete?: ForceDeletePolicy | undefined;
        };
      }
    | undefined,
): ForceDeleteGrant {
  if (kubernetes === undefined) return noClusterGrant;
  const { forceDelete, onTimeout } = kubernetes.drain;
  return { forceDelete: forceDelete ?? 'admin', machineOnTimeout: onTimeout };
}

function permits(policy: ForceDeletePolicy, identity: Identity): boolean {
  switch (policy) {
    case 'allow':
      return identity.role === 'operator' || identity.role === 'admin';
    case 'admin':
      return identity.role === 'admin';
    case 'deny':
      return false;
  }
}

/** Throw MOLT_FORBIDDEN when `drain` asks for a force-delete the machine does not grant `identity`. */
export function authoriseDrain(
  drain: UpgradeRequestBody['drain'],
  identity: Identity,
  grant: ForceDeleteGrant,
): void {
  if (drain?.onTimeout !== 'force-delete') return;
  if (grant.machineOnTimeout === 'force-delete' || permits(grant.forceDelete, identity)) return;
  throw new MoltError(
    ErrorCode.Forbidden,
    `${identity.name} (role ${identity.role}) may not ask this machine for force-delete drains ` +
      `(its config: kubernetes.drain.forceDelete: ${grant.forceDelete})`,
    {
      hint:
        grant.forceDelete === 'deny'
          ? "this machine never force-deletes on request: drop `onTimeout: force-delete` from the pool's drain policy"
          : "ask with an admin certificate, drop `onTimeout: force-delete` from the pool's drain policy, or set `kubernetes.drain.forceDelete: allow` in this machine's config",
    },
  );
}
