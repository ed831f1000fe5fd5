// SPDX-License-Identifier: Apache-2.0
/**
 * Where the operator keeps Kubernetes plans (docs/adr/0012 §4): the recorded plans
 * (`kube-upgrades/<cluster>/<id>`), each written before and after every step, and the cluster's
 * desired Kubernetes as a person asked for it (`molt cluster kubernetes upgrade --to`). Part of
 * {@link OperatorStore}: the memory and etcd stores implement it and pass the same conformance
 * suite (`testkit/operator-store-kube.ts`).
 *
 * The invariant: one plan per cluster moves at a time. `createKubeUpgrade` refuses a plan while
 * another of the same cluster is Running or RollingBack (`MOLT_KUBE_UPGRADE_RUNNING`), atomically —
 * two operators (a deposed leader and the new one, or the API and the loop) racing to create one
 * leave exactly one.
 */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { isActivePlan, type KubeUpgrade } from '../../core/kubernetes/types.ts';
import type { KubernetesClusterSpec } from '../../protocol/kube-cluster.ts';

/** The desired Kubernetes of a cluster as the operator records it. */
export interface KubeDesiredRecord {
  readonly cluster: string;
  readonly spec: KubernetesClusterSpec;
  /** Who set it: a certificate's name, or `declared` (the fleet file, a molt.dev object). */
  readonly by: string;
  /** Epoch ms. */
  readonly at: number;
  /**
   * The declared spec (JSON) when this was written: a declared spec that differs from it has
   * changed since, and wins over a person's request (a later change of the file is the newer word).
   */
  readonly declared?: string;
  /**
   * Written before the operator had read the declared objects, so `declared` is unknown: the first
   * read becomes its baseline (the request is the newer word) instead of counting as a change.
   */
  readonly declaredUnread?: boolean;
}

export interface KubeUpgradeStore {
  /** The plans of `cluster` (every cluster's when undefined), by cluster then id (oldest first). */
  kubeUpgrades(cluster?: string): Promise<KubeUpgrade[]>;
  /**
   * Record a new plan: `MOLT_KUBE_UPGRADE_RUNNING` while another plan of its cluster is Running or
   * RollingBack, `MOLT_BAD_INPUT` when its id is taken.
   */
  createKubeUpgrade(plan: KubeUpgrade): Promise<void>;
  /**
   * Compare-and-set update of one plan (`change` may run more than once: pure; it may not change
   * the id or cluster). `MOLT_KUBE_UPGRADE_NOT_FOUND` if absent. Returns the stored result.
   */
  updateKubeUpgrade(
    cluster: string,
    id: string,
    change: (current: KubeUpgrade) => KubeUpgrade,
  ): Promise<KubeUpgrade>;
  kubeDesired(cluster: string): Promise<KubeDesiredRecord | undefined>;
  /** Replace the cluster's desired Kubernetes (last writer wins). */
  putKubeDesired(record: KubeDesiredRecord): Promise<void>;
}

/* The errors and the check every store makes alike. */

/** A plan of `cluster` still moving. */
export function runningPlan(
  plans: Iterable<KubeUpgrade>,
  cluster: string,
): KubeUpgrade | undefined {
  for (const p of plans) if (p.cluster === cluster && isActivePlan(p.phase)) return p;
  return undefined;
}

export function runningError(running: KubeUpgrade): MoltError {
  return new MoltError(
    ErrorCode.KubeUpgradeRunning,
    `cluster ${running.cluster} already has a Kubernetes plan in progress: ${running.id} (${running.phase})`,
    {
      hint: `follow it with \`molt cluster kubernetes status --cluster ${running.cluster}\`, or roll it back`,
      details: { plan: running.id, phase: running.phase },
    },
  );
}

export function notFound(cluster: string, id: string): MoltError {
  return new MoltError(
    ErrorCode.KubeUpgradeNotFound,
    `cluster ${cluster} has no Kubernetes plan ${id}`,
    {
      hint: `list them with \`molt cluster kubernetes status --cluster ${cluster}\``,
    },
  );
}
