// SPDX-License-Identifier: Apache-2.0
/**
 * A Kubernetes node's sandbox ("pause") image, checked at install: every pod on the node starts in
 * it, so a registry that lacks it would leave the node Ready with no pod ever running. It is
 * looked up where the machine's own pulls go, under the name the config gives (registry mirrors
 * are the machine's view; the installer reads the published name, as it does for the OS image).
 */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { parseImageReference } from '../../core/slots/reference.ts';
import { createRegistryClient } from '../../oci/index.ts';
import type { MachineConfig } from '../../protocol/machine-config.ts';

/** Refuses (`MOLT_IMAGE_MISSING`) a `kubernetes.node.sandboxImage` its registry does not hold. */
export async function checkSandboxImage(config: MachineConfig, insecure: boolean): Promise<void> {
  const image = config.kubernetes?.node?.sandboxImage;
  if (image === undefined) return;
  const ref = parseImageReference(image);
  const missing = (why: string, cause?: unknown): MoltError =>
    new MoltError(
      ErrorCode.ImageMissing,
      `kubernetes.node.sandboxImage ${image} ${why}: every pod on the node starts in it`,
      {
        hint: 'push the sandbox image to that registry first (the lab pushes molt/pause), or name one it holds',
        ...(cause !== undefined && { cause }),
      },
    );
  const client = createRegistryClient({
    registry: ref.registry,
    insecure: insecure || config.registry.insecure,
  });
  try {
    const found = await client.headManifest(ref.repository, ref.digest ?? ref.tag ?? 'latest');
    if (found === undefined) throw missing('is not in its registry');
  } catch (error) {
    if (error instanceof MoltError && error.code === ErrorCode.ImageMissing) throw error;
    throw missing(`cannot be checked (${(error as Error).message})`, error);
  } finally {
    await client.close();
  }
}
