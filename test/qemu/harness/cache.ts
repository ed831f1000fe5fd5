// SPDX-License-Identifier: Apache-2.0
/** Where scripts/qemu-setup.sh put the payload and systemd-boot (`$MOLT_QEMU_CACHE`, default `.molt/qemu`). */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

export interface QemuCache {
  readonly kernel: string;
  readonly busybox: string;
  readonly sdboot: string;
}

export function qemuCache(): QemuCache {
  const dir = process.env['MOLT_QEMU_CACHE'] ?? resolve(import.meta.dirname, '../../../.molt/qemu');
  const cache = {
    kernel: join(dir, 'vmlinuz'),
    busybox: join(dir, 'busybox/bin/busybox'),
    sdboot: join(dir, 'sdboot/usr/lib/systemd/boot/efi/systemd-bootx64.efi'),
  };
  for (const path of Object.values(cache)) {
    if (!existsSync(path))
      throw new Error(`${path} is missing: run scripts/qemu-setup.sh (or npm run test:qemu)`);
  }
  return cache;
}
