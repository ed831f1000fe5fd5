// SPDX-License-Identifier: Apache-2.0
/**
 * Is anyone using the disk? The installer rewrites a whole disk, so it refuses one that is
 * mounted, used as swap or held by another block device (device-mapper, md RAID) — on the disk or
 * on any partition of it — and a disk file that backs a loop device, whose partitions may be
 * mounted under another name (`MOLT_DISK_IN_USE`). The facts come from /proc and /sys; reading
 * them is the adapter's, judging them is this pure function's.
 */
import { ErrorCode, MoltError } from '../errors.ts';

/** A block device of the disk: the whole disk or one partition, as /sys/class/block names it. */
export interface BlockDeviceFacts {
  /** `sda`, `sda1`, `loop0p2`. */
  readonly name: string;
  /** `major:minor`, as /sys/class/block/<name>/dev and /proc/self/mountinfo write it. */
  readonly devNumber: string;
  /** Names under /sys/class/block/<name>/holders (`dm-0`, `md127`). */
  readonly holders: readonly string[];
}

export interface DiskUseFacts {
  /** A block device disk and its partitions; empty for a disk file. */
  readonly devices: readonly BlockDeviceFacts[];
  /** /proc/self/mountinfo. */
  readonly mountinfo: string;
  /** /proc/swaps. */
  readonly swaps: string;
  /** Loop devices whose backing file is the disk file (`loop3`). */
  readonly loopDevices: readonly string[];
}

/** Mount point by `major:minor` of the mounted device (the first mount of each). */
export function mountedDevices(mountinfo: string): ReadonlyMap<string, string> {
  const mounted = new Map<string, string>();
  for (const line of mountinfo.split('\n')) {
    // id parent major:minor root mountpoint … (proc(5)); octal escapes in paths stay escaped.
    const fields = line.split(' ');
    const dev = fields[2];
    const point = fields[4];
    if (dev !== undefined && point !== undefined && !mounted.has(dev)) mounted.set(dev, point);
  }
  return mounted;
}

/** Device names (`sda2`, `dm-1`) /proc/swaps lists as swap areas. */
export function swapDevices(swaps: string): readonly string[] {
  return swaps
    .split('\n')
    .slice(1)
    .map((line) => line.split(/\s+/)[0] ?? '')
    .filter((path) => path.startsWith('/dev/'))
    .map((path) => path.slice(path.lastIndexOf('/') + 1));
}

/** Why the disk is in use, one reason a line; empty when it is free. */
export function diskUsers(facts: DiskUseFacts): readonly string[] {
  const reasons: string[] = [];
  const mounted = mountedDevices(facts.mountinfo);
  const swap = new Set(swapDevices(facts.swaps));
  for (const d of facts.devices) {
    const point = mounted.get(d.devNumber);
    if (point !== undefined) reasons.push(`/dev/${d.name} is mounted at ${point}`);
    if (swap.has(d.name)) reasons.push(`/dev/${d.name} is a swap area`);
    for (const h of d.holders) reasons.push(`/dev/${d.name} is held by /dev/${h}`);
  }
  for (const loop of facts.loopDevices) reasons.push(`it backs the loop device /dev/${loop}`);
  return reasons;
}

/** Throw `MOLT_DISK_IN_USE` naming every user of `disk`. */
export function requireUnused(facts: DiskUseFacts, disk: string): void {
  const reasons = diskUsers(facts);
  if (reasons.length === 0) return;
  throw new MoltError(ErrorCode.DiskInUse, `${disk} is in use: ${reasons.join('; ')}`, {
    hint:
      facts.loopDevices.length > 0
        ? `detach it first (losetup -d /dev/${facts.loopDevices.join(' /dev/')}), or install onto the loop device`
        : 'unmount its filesystems (umount), turn off its swap (swapoff) and stop what holds it, then install again',
    details: { reasons },
  });
}
