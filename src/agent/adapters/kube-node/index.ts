// SPDX-License-Identifier: Apache-2.0
/**
 * The machine's Kubernetes node through the API (docs/adr/0006): the agent cordons and drains its
 * own node before the reboot and uncordons it once the new slot is healthy, with the drain policy
 * of its config (`platform/kube/node-drain.ts` does the work). Loaded only for machines whose
 * config has a `kubernetes` section, so agents outside a cluster never load the Kubernetes client.
 * Readiness gates the commit (core's `judgeNodeReady`): the kubelet of this boot must have
 * reported the node Ready — its status carries this boot's id, not the previous boot's status that
 * the node controller keeps Ready through its grace period — and where the node reports a molt
 * version (the `molt.dev/version` label) that must be the booted release, and where the booted
 * release names its kubelet (the slot's `kubeletVersion`) the Node's kubelet must be that one.
 */
import { withOverride } from '../../../core/drain/pods.ts';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { judgeNodeReady } from '../../../core/kubernetes/node-ready.ts';
import { loadKubeConfig } from '../../../platform/kube/client.ts';
import { createNodeDrainer, QuarantineLabel, type UncordonOutcome } from './drain.ts';
import type { KubernetesConfig } from '../../../protocol/machine-config.ts';
import type { KubeNode, KubeOutcome } from '../../ports/kube-node.ts';

const done: KubeOutcome = { status: 'done' };

/** Why an uncordon left the node as it is, as the machine's event says it. */
const uncordonSkipped: Record<Exclude<UncordonOutcome, 'uncordoned'>, string> = {
  schedulable: 'is schedulable already',
  'cordoned-by-another': 'was cordoned by someone other than molt: it stays cordoned',
  quarantined: `is quarantined (${QuarantineLabel}): it stays cordoned until a person removes the label`,
};

export interface KubeNodeContext {
  /** The machine's name, the node's unless the config names it. */
  readonly machine: string;
  /** The booted slot's release version, which a ready node must report. */
  readonly booted?: string | undefined;
  /** This boot's id, which the Node's kubelet must report (`status.nodeInfo.bootID`). */
  readonly bootId?: string | undefined;
  /** The booted release's kubelet version, which the Node must run (`status.nodeInfo.kubeletVersion`). */
  readonly kubelet?: string | undefined;
  readonly log?: (line: string) => void;
}

export async function createApiKubeNode(
  config: KubernetesConfig,
  { machine, booted, bootId, kubelet, log }: KubeNodeContext,
): Promise<KubeNode> {
  const kc = await loadKubeConfig(config.kubeconfig);
  const node = config.nodeName ?? machine;
  const drainer = createNodeDrainer({ kc, node, ...(log !== undefined && { log }) });
  const policy = {
    timeoutMs: config.drain.timeoutSeconds * 1000,
    onTimeout: config.drain.onTimeout,
    deleteEmptyDirData: config.drain.deleteEmptyDirData,
    force: config.drain.force,
  };
  return {
    async cordon(operationId) {
      return (await drainer.cordon(operationId))
        ? done
        : { status: 'skipped', reason: `node ${node} was already cordoned` };
    },
    async drain(operationId, override) {
      await drainer.drain(operationId, withOverride(policy, override));
      return done;
    },
    async uncordon() {
      const outcome = await drainer.uncordon();
      return outcome === 'uncordoned'
        ? done
        : { status: 'skipped', reason: `node ${node} ${uncordonSkipped[outcome]}` };
    },
    async ready() {
      const verdict = judgeNodeReady(await drainer.readiness(), {
        node,
        booted,
        bootId,
        kubelet,
      });
      if (!verdict.ready) throw new MoltError(ErrorCode.KubeUnavailable, verdict.reason);
      return done;
    },
    apiServer: () => drainer.apiServer(),
  };
}
