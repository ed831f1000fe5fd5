// SPDX-License-Identifier: Apache-2.0
/**
 * The agents' image route as the operator uses it (docs/adr/0015 §7): tell a machine the whole
 * list of images by digest its container runtime keeps pinned. Resolves once each is pulled and
 * pinned; `MOLT_NOT_KUBERNETES_NODE` from a machine without a node runtime, `MOLT_IMAGE_PIN_FAILED`
 * when an image could not be pulled. The adapter is `adapters/agent-node-pins`.
 */
import type { PinnedImagesAnswer } from '../../protocol/agent-images.ts';
import type { MachineRecord } from './store.ts';

export interface NodePins {
  setPinned(machine: MachineRecord, images: readonly string[]): Promise<PinnedImagesAnswer>;
  close(): Promise<void>;
}
