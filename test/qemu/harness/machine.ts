// SPDX-License-Identifier: Apache-2.0
/**
 * A test machine for the QEMU suite: a molt root directory (`<root>/esp/` written by molt's
 * bootloader back-end, as on a real node) plus the firmware state of one virtual machine. Each
 * `boot()` builds the ESP disk image from `<root>/esp/`, powers the VM on once, and copies the ESP
 * back so the back-end's `read()` sees what the real bootloader wrote (grubenv, renamed entries).
 */
import { createHash } from 'node:crypto';
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SlotId, SlotManifest } from '../../../src/core/slots/slot.ts';
import { slotDir } from '../../../src/core/slots/slot.ts';
import { tempDir } from '../../../src/platform/process/managed-process.ts';
import { readEspImage, writeEspImage } from './esp.ts';
import { buildGrubEfi } from '../../../src/image/install/grub-efi.ts';
import { buildInitramfs, type InitBehaviour } from './initramfs.ts';
import { powerOn, type BootResult } from './qemu.ts';
import { qemuCache } from './cache.ts';

export type BootloaderKind = 'grub' | 'sdboot';

/** Kernel arguments every slot adds through its `cmdline` artifact: the payload reports on ttyS0. */
export const SlotCmdline = 'console=ttyS0 quiet';

export interface SlotPayload {
  readonly version: string;
  readonly generation: number;
  /** `panic`: the kernel boots but init dies (the slot never comes up). Default `ok`. */
  readonly init?: InitBehaviour;
}

export interface TestMachine {
  readonly root: string;
  /** Every boot so far, in order (for timings and failure messages). */
  readonly boots: BootResult[];
  /** Write slot artifacts (kernel, initramfs, cmdline) where molt's slot store puts them; returns the manifest. */
  installSlot(slot: SlotId, payload: SlotPayload): Promise<SlotManifest>;
  /** Remove the slot's kernel from the ESP (a slot whose kernel cannot be loaded). */
  removeKernel(slot: SlotId): Promise<void>;
  boot(): Promise<BootResult>;
  dispose(): Promise<void>;
}

async function artifact(
  root: string,
  path: string,
  data: Buffer,
): Promise<{ path: string; size: number; digest: string }> {
  await mkdir(join(root, path, '..'), { recursive: true });
  await writeFile(join(root, path), data);
  return {
    path,
    size: data.length,
    digest: `sha256:${createHash('sha256').update(data).digest('hex')}`,
  };
}

async function installBootloaderBinary(root: string, kind: BootloaderKind): Promise<void> {
  const dir = join(root, 'esp', 'EFI', 'BOOT');
  await mkdir(dir, { recursive: true });
  if (kind === 'grub') await buildGrubEfi(join(dir, 'BOOTX64.EFI'));
  else await copyFile(qemuCache().sdboot, join(dir, 'BOOTX64.EFI'));
}

/** A fresh machine whose ESP boots the real `kind` bootloader. */
export async function createTestMachine(kind: BootloaderKind): Promise<TestMachine> {
  const dir = await tempDir(`qemu-${kind}`);
  const root = dir.path;
  const cache = qemuCache();
  await installBootloaderBinary(root, kind);
  const boots: BootResult[] = [];
  const disk = join(root, 'disk.img');
  return {
    root,
    boots,
    async installSlot(slot, payload) {
      const x = slotDir(slot);
      const kernel = await artifact(root, `esp/molt/${x}/vmlinuz`, await readFile(cache.kernel));
      const initrd = await artifact(
        root,
        `esp/molt/${x}/initrd.img`,
        await buildInitramfs(cache.busybox, payload.init ?? 'ok'),
      );
      const cmdline = await artifact(root, `slots/${x}/cmdline`, Buffer.from(`${SlotCmdline}\n`));
      return {
        schema: 1,
        slot,
        status: 'ready',
        imageRef: `lab.test/molt/node:${payload.version}`,
        imageDigest: `sha256:${'0'.repeat(64)}`,
        version: payload.version,
        generation: payload.generation,
        artifacts: { vmlinuz: kernel, 'initrd.img': initrd, cmdline },
        operationId: `op-${payload.version}`,
        writtenAt: new Date().toISOString(),
      };
    },
    async removeKernel(slot) {
      await rm(join(root, 'esp', 'molt', slotDir(slot), 'vmlinuz'));
    },
    async boot() {
      await writeEspImage(join(root, 'esp'), disk);
      const result = await powerOn({ disk, dir: join(root, 'vm') });
      await writeFile(join(root, `serial-${boots.length}.log`), result.serial);
      boots.push(result);
      await readEspImage(disk, join(root, 'esp'));
      return result;
    },
    dispose: () => (process.env['MOLT_QEMU_KEEP'] ? Promise.resolve() : dir.remove()),
  };
}
