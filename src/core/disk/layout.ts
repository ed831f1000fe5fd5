// SPDX-License-Identifier: Apache-2.0
/**
 * molt's disk layout (docs/real-machines.md §1, the contract): a GPT disk with five partitions
 * named `molt-esp`, `molt-a`, `molt-b`, `molt-state`, `molt-ephemeral`, each starting on a 1 MiB
 * boundary. {@link planDisk} turns a disk size and the partition sizes into offsets, or refuses
 * a disk that cannot hold them (`MOLT_DISK_TOO_SMALL`) — before the installer writes a byte.
 */
import { ErrorCode, MoltError } from '../errors.ts';

export const MiB = 1024 * 1024;
export const SectorBytes = 512;

/** GPT partition type GUIDs (the Discoverable Partitions Specification's). */
export const PartitionType = {
  Esp: 'C12A7328-F81F-11D2-BA4B-00A0C93EC93B',
  /** Linux root (x86-64): what firmware tools and systemd-gpt-auto call a root partition. */
  RootX86_64: '4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709',
  LinuxData: '0FC63DAF-8483-4772-8E79-3D69D8477DE4',
} as const;

export const PartitionName = {
  Esp: 'molt-esp',
  A: 'molt-a',
  B: 'molt-b',
  State: 'molt-state',
  Ephemeral: 'molt-ephemeral',
} as const;
export type PartitionName = (typeof PartitionName)[keyof typeof PartitionName];

/** The five names, in the order a molt table holds them. */
export const PartitionOrder: readonly PartitionName[] = [
  PartitionName.Esp,
  PartitionName.A,
  PartitionName.B,
  PartitionName.State,
  PartitionName.Ephemeral,
];

/** Sizes in bytes; every one a whole number of MiB. */
export interface LayoutSizes {
  readonly esp: number;
  readonly slot: number;
  readonly state: number;
  /** The least EPHEMERAL may get; it takes the rest of the disk. */
  readonly minEphemeral: number;
}

export const DefaultSizes: LayoutSizes = {
  esp: 256 * MiB,
  slot: 1024 * MiB,
  state: 128 * MiB,
  minEphemeral: 256 * MiB,
};

/**
 * STATE of a machine that runs Kubernetes control-plane components: it keeps their bundles (some
 * 250 MiB each: the one they run and the next, staged before an upgrade) beside the config, PKI
 * and journal that fit in the default.
 */
export const ControlPlaneStateBytes = 1024 * MiB;

/**
 * The smallest sizes the installer accepts: FAT32 needs 65,525 clusters (≈ 33 MiB at one sector
 * each), ext4 with a journal wants a few MiB; a slot only has to hold its image.
 */
export const MinimumSizes: LayoutSizes = {
  esp: 64 * MiB,
  slot: 1 * MiB,
  state: 16 * MiB,
  minEphemeral: 256 * MiB,
};

/** First usable byte: 1 MiB, after the protective MBR and the primary GPT (aligned, as parted does). */
export const FirstPartitionOffset = MiB;
/** Room at the end for the backup GPT (33 sectors), rounded to the alignment. */
export const BackupGptBytes = MiB;

export interface PlannedPartition {
  readonly number: number;
  readonly name: PartitionName;
  readonly type: string;
  readonly offset: number;
  readonly size: number;
  readonly filesystem: 'vfat' | 'raw' | 'ext4';
}

export interface DiskPlan {
  readonly diskBytes: number;
  readonly minimumDiskBytes: number;
  readonly sizes: LayoutSizes;
  readonly partitions: readonly PlannedPartition[];
}

/** `1 + esp + 2 × slot + state + minEphemeral` MiB, plus the backup GPT. */
export function minimumDiskBytes(sizes: LayoutSizes): number {
  return (
    FirstPartitionOffset +
    sizes.esp +
    2 * sizes.slot +
    sizes.state +
    sizes.minEphemeral +
    BackupGptBytes
  );
}

function mib(bytes: number): string {
  return `${Math.floor(bytes / MiB)} MiB`;
}

/** Refuse sizes that are not whole MiB or are under {@link MinimumSizes}. */
export function checkSizes(sizes: LayoutSizes): void {
  for (const key of ['esp', 'slot', 'state', 'minEphemeral'] as const) {
    const value = sizes[key];
    if (!Number.isSafeInteger(value) || value % MiB !== 0 || value < MinimumSizes[key])
      throw new MoltError(
        ErrorCode.BadFlag,
        `the ${key} size ${String(value)} bytes is not a whole number of MiB of at least ${mib(MinimumSizes[key])}`,
        { hint: 'sizes take a suffix: 16M, 256MiB, 1G, 2GiB' },
      );
  }
}

/** The partitions of a disk of `diskBytes`; `MOLT_DISK_TOO_SMALL` when they do not fit. */
export function planDisk(diskBytes: number, sizes: LayoutSizes = DefaultSizes): DiskPlan {
  checkSizes(sizes);
  const minimum = minimumDiskBytes(sizes);
  if (diskBytes < minimum)
    throw new MoltError(
      ErrorCode.DiskTooSmall,
      `the disk has ${mib(diskBytes)} (${String(diskBytes)} bytes); molt's layout needs at least ${mib(minimum)}: ` +
        `1 + ESP ${mib(sizes.esp)} + 2 × slot ${mib(sizes.slot)} + STATE ${mib(sizes.state)} + EPHEMERAL ≥ ${mib(sizes.minEphemeral)} + 1 (backup GPT)`,
      {
        hint: 'use a larger disk, a smaller --slot-size or --state-size, or for a disk file --disk-size',
        details: { diskBytes, minimumDiskBytes: minimum },
      },
    );
  // EPHEMERAL ends on a MiB boundary before the backup GPT; the tail under 1 MiB stays unused.
  const usableEnd = Math.floor((diskBytes - BackupGptBytes) / MiB) * MiB;
  const fixed: readonly [PartitionName, string, number, PlannedPartition['filesystem']][] = [
    [PartitionName.Esp, PartitionType.Esp, sizes.esp, 'vfat'],
    [PartitionName.A, PartitionType.RootX86_64, sizes.slot, 'raw'],
    [PartitionName.B, PartitionType.RootX86_64, sizes.slot, 'raw'],
    [PartitionName.State, PartitionType.LinuxData, sizes.state, 'ext4'],
  ];
  const partitions: PlannedPartition[] = [];
  let offset = FirstPartitionOffset;
  for (const [name, type, size, filesystem] of fixed) {
    partitions.push({ number: partitions.length + 1, name, type, offset, size, filesystem });
    offset += size;
  }
  partitions.push({
    number: 5,
    name: PartitionName.Ephemeral,
    type: PartitionType.LinuxData,
    offset,
    size: usableEnd - offset,
    filesystem: 'ext4',
  });
  return { diskBytes, minimumDiskBytes: minimum, sizes, partitions };
}

/** The partition of `plan` named `name` (every plan has all five). */
export function partitionOf(plan: DiskPlan, name: PartitionName): PlannedPartition {
  const found = plan.partitions.find((p) => p.name === name);
  if (found === undefined) throw new Error(`plan without ${name}`);
  return found;
}

/** The plan as an `sfdisk` script (sectors of 512 bytes), one partition a line. */
export function sfdiskScript(plan: DiskPlan): string {
  const lines = ['label: gpt', `first-lba: ${String(FirstPartitionOffset / SectorBytes)}`];
  for (const p of plan.partitions)
    lines.push(
      `start=${String(p.offset / SectorBytes)}, size=${String(p.size / SectorBytes)}, type=${p.type}, name="${p.name}"`,
    );
  return `${lines.join('\n')}\n`;
}
