// SPDX-License-Identifier: Apache-2.0
/**
 * The agent tells the cluster where its API is (docs/adr/0011, "Machines from Nodes"): it writes
 * its endpoint into its own Node's annotation `molt.dev/agent-endpoint`, so an operator that takes
 * machines from the cluster's Nodes can reach it. The Node may not exist yet (the kubelet
 * registers it) and the API server may be away: the write is retried, 2 s doubling to 30 s, in
 * the background, until it lands. Only this Node's own agent may write it (deploy/kubernetes/
 * rbac.yaml confines each agent's identity to its Node); the operator still checks the agent's
 * certificate name against the Node's: an annotation can point at the wrong place, never at
 * another machine's identity.
 */
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { kubeError, loadKubeConfig } from '../../../platform/kube/client.ts';
import { AgentEndpointAnnotation } from '../../../protocol/kube-resources.ts';

const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

export interface AdvertiseOptions {
  readonly kubeconfig: string;
  readonly node: string;
  readonly endpoint: string;
  readonly log: (line: string) => void;
}

/** Start writing the annotation; `stop()` ends the retries (at shutdown). */
export function advertiseEndpoint(o: AdvertiseOptions): { stop(): void } {
  const state = { stopped: false, timer: undefined as NodeJS.Timeout | undefined };
  let last = '';
  const attempt = async (waitMs: number): Promise<void> => {
    if (state.stopped) return;
    try {
      const core = (await loadKubeConfig(o.kubeconfig)).makeApiClient(CoreV1Api);
      await core.patchNode(
        {
          name: o.node,
          body: { metadata: { annotations: { [AgentEndpointAnnotation]: o.endpoint } } },
        },
        merge,
      );
      o.log(`node ${o.node}: ${AgentEndpointAnnotation}=${o.endpoint}`);
    } catch (e) {
      // kubeError names the rule that refused it (e.g. an agent whose identity is not this Node's).
      const line = kubeError(e, `annotate node ${o.node}`).message;
      if (line !== last)
        o.log(`node ${o.node}: cannot advertise the agent yet (${line}); retrying`);
      last = line;
      state.timer = setTimeout(() => void attempt(Math.min(waitMs * 2, 30_000)), waitMs);
      state.timer.unref();
    }
  };
  void attempt(2_000);
  return {
    stop() {
      state.stopped = true;
      clearTimeout(state.timer);
    },
  };
}
