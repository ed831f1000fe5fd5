// SPDX-License-Identifier: Apache-2.0
/**
 * In the lab the agent plays its node's kubelet (docs/adr/0006 §8): registered and reported Ready
 * with the booted release while the agent runs, silent while the machine reboots, and reported
 * NotReady by a clean shutdown. Its pods are Ready unless their image's labels say
 * `dev.molt.lab.ready=false` (docs/adr/0013 §7), read from the registry with the machine's registry
 * settings. The Kubernetes client is imported only when the config asks.
 */
import { ErrorCode, errorMessage, MoltError } from '../../../core/errors.ts';
import type { MachineConfig } from '../../../protocol/machine-config.ts';
import { referencedRegistryOptions } from '../oci-image-source/config-options.ts';

export interface RunningKubelet {
  shutdown(): Promise<void>;
}

export async function startKubeletFor(
  config: MachineConfig,
  opts: { lab: boolean; version: string; bootId: string; log: (line: string) => void },
): Promise<RunningKubelet | undefined> {
  const kubelet = config.kubernetes?.labKubelet;
  if (kubelet === undefined) return undefined;
  if (!opts.lab) {
    throw new MoltError(
      ErrorCode.MachineInvalid,
      'kubernetes.labKubelet is for lab machines only: a real machine runs a real kubelet',
      { hint: 'remove kubernetes.labKubelet from the machine config' },
    );
  }
  const [{ loadKubeConfig }, { startLabKubelet }, { createImageReadiness }] = await Promise.all([
    import('../../../platform/kube/client.ts'),
    import('./kubelet-node.ts'),
    import('./image-readiness.ts'),
  ]);
  let last = '';
  const images = createImageReadiness({
    registry: referencedRegistryOptions(config.registry),
    mirrors: config.registry.mirrors,
  });
  const node = startLabKubelet({
    kc: await loadKubeConfig(kubelet.kubeconfig),
    name: config.kubernetes?.nodeName ?? config.node,
    version: opts.version,
    bootId: opts.bootId,
    address: config.api.host,
    onError: (e) => {
      // One line per distinct failure, not one per period while the API server is away.
      const line = errorMessage(e);
      if (line !== last) opts.log(`lab kubelet: ${line}`);
      last = line;
    },
    imageReady: (image) => images.check(image),
  });
  return {
    async shutdown() {
      await node.shutdown();
      await images.close();
    },
  };
}
