// SPDX-License-Identifier: Apache-2.0
/**
 * `molt agent install --root DIR --image REF`: the first install of an empty machine, as an
 * installer would do it — pull into slot A, check it while staged, write it, verify it, write its
 * boot entry, mark it ready and make it the default (the order of an upgrade, docs/adr/0004 §4). Refused when a slot already holds an image: later changes go through upgrades,
 * which keep a slot to fall back to.
 */
import { ErrorCode, MoltError } from '../core/errors.ts';
import { bootloaderFor, imageSourceFor } from './compose.ts';
import type { MachineConfig } from '../protocol/machine-config.ts';
import { createFsSlotStore } from './adapters/fs-slot-store/index.ts';

export async function installFirstSlot(
  root: string,
  config: MachineConfig,
  image: string,
): Promise<string> {
  const slots = createFsSlotStore(root, { maxImageBytes: config.maxImageBytes });
  for (const slot of ['A', 'B'] as const) {
    const manifest = await slots.manifest(slot);
    if (manifest?.status === 'ready') {
      throw new MoltError(
        ErrorCode.BadInput,
        `slot ${slot} already holds ${manifest.version}; install only sets up an empty machine`,
        {
          hint: 'use `molt node upgrade` to change a machine that is installed',
        },
      );
    }
  }
  const bootloader = bootloaderFor(root, config);
  const operationId = `install-${Date.now().toString(36)}`;
  const staged = await (await imageSourceFor(root, config)).pull(image, 'A');
  try {
    await slots.checkStaged('A');
  } catch (error) {
    await slots.discardStaged('A');
    throw error;
  }
  await bootloader.removeEntry('A');
  await slots.markWriting('A', operationId);
  await slots.install('A', operationId);
  await bootloader.writeEntry('A', await slots.verify('A', operationId));
  await slots.markReady('A', operationId);
  await bootloader.commit('A');
  return staged.version;
}
