// SPDX-License-Identifier: Apache-2.0
/**
 * The ESP as the firmware sees it: a GPT disk image with one EFI System Partition (FAT32) made
 * with sfdisk + mkfs.vfat and filled with mtools from the `<root>/esp/` directory molt wrote; and
 * the way back, so molt's back-ends can `read()` what the real bootloader wrote at boot.
 */
import { execFile } from 'node:child_process';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const MiB = 1024 * 1024;
/** The partition starts at 1 MiB (sector 2048) and is 96 MiB long; the disk adds 1 MiB for the backup GPT. */
const PART_START_SECTOR = 2048;
const PART_MIB = 96;
const ESP_TYPE = 'C12A7328-F81F-11D2-BA4B-00A0C93EC93B';
const mtoolsEnv = { ...process.env, MTOOLS_SKIP_CHECK: '1' };

function partition(disk: string): string {
  return `${disk}@@${PART_START_SECTOR * 512}`;
}

/** (Re)create `disk` as a fresh GPT disk whose ESP holds a copy of the directory `espDir`. */
export async function writeEspImage(espDir: string, disk: string): Promise<void> {
  await rm(disk, { force: true });
  await writeFile(disk, '');
  await run('truncate', ['-s', `${(PART_MIB + 2) * MiB}`, disk]);
  const script = `label: gpt\nstart=${PART_START_SECTOR}, size=${PART_MIB * 2048}, type=${ESP_TYPE}, name=ESP\n`;
  await runWithInput('sfdisk', ['-q', disk], script);
  await run('mkfs.vfat', [
    '-F',
    '32',
    '-n',
    'ESP',
    '--offset',
    `${PART_START_SECTOR}`,
    disk,
    `${PART_MIB * 1024}`,
  ]);
  const names = await readdir(espDir);
  if (names.length > 0) {
    await run(
      'mcopy',
      ['-s', '-Q', '-m', '-i', partition(disk), ...names.map((n) => join(espDir, n)), '::/'],
      { env: mtoolsEnv },
    );
  }
}

/** Replace the directory `espDir` with the current content of the ESP in `disk`. */
export async function readEspImage(disk: string, espDir: string): Promise<void> {
  await rm(espDir, { recursive: true, force: true });
  await mkdir(espDir, { recursive: true });
  await run('mcopy', ['-s', '-n', '-m', '-i', partition(disk), '::/*', `${espDir}/`], {
    env: mtoolsEnv,
  });
}

function runWithInput(cmd: string, args: readonly string[], input: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = execFile(cmd, args, (err) => {
      if (err) reject(new Error(`${cmd} failed: ${err.message}`));
      else resolve();
    });
    child.stdin?.end(input);
  });
}
