// SPDX-License-Identifier: Apache-2.0
/**
 * The bootloaders molt drives. Every type, schema and CLI choice that names one derives from this
 * list, so adding a bootloader starts here (and at its adapter, `agent/adapters/`).
 */
export const Bootloaders = ['grub', 'systemd-boot'] as const;
export type BootloaderName = (typeof Bootloaders)[number];

/** True when `name` is a bootloader molt drives. */
export const isBootloader = (name: string): name is BootloaderName =>
  (Bootloaders as readonly string[]).includes(name);
