// SPDX-License-Identifier: Apache-2.0
/**
 * The images a Kubernetes node keeps pinned (docs/adr/0015 §7), for main.ts: only a machine with
 * a node runtime (`kubernetes.node`) has them, pinned in the image's containerd through `ctr`,
 * pulling through the same registry hosts files as the CRI. The adapters are loaded only then
 * (P6: an agent that is no node loads nothing for it).
 */
import { join } from 'node:path';
import type { MachineConfig } from '../protocol/machine-config.ts';
import type { PinnedImages } from './machine/pinned-images.ts';

export async function pinnedImagesFor(
  root: string,
  config: MachineConfig,
): Promise<PinnedImages | undefined> {
  if (config.kubernetes?.node === undefined) return undefined;
  const [{ createContainerdPins }, { createFsPinnedRecord }, { NodeDir }, { createPinnedImages }] =
    await Promise.all([
      import('./adapters/containerd-pins/index.ts'),
      import('./adapters/fs-pinned-record/index.ts'),
      import('./kubernetes-node/files.ts'),
      import('./machine/pinned-images.ts'),
    ]);
  return createPinnedImages({
    pins: createContainerdPins({
      hostsDir: join(NodeDir, 'certs.d'),
      plainHttp: config.registry.insecure,
      pullTimeoutMs: config.pullTimeoutSeconds * 1000,
    }),
    record: createFsPinnedRecord(root),
  });
}
