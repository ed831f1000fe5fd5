// SPDX-License-Identifier: Apache-2.0
/**
 * "Is this disk molt's?" (docs/real-machines.md §1): a partition table is molt's when it is GPT
 * with exactly the five names in order. Anything else that is on the disk — another table, a
 * filesystem written straight onto it — belongs to someone, and the installer replaces it only
 * when told to (`--wipe`), so a mistyped device name never costs anyone their data.
 */
import { ErrorCode, MoltError } from '../errors.ts';
import { PartitionOrder } from './layout.ts';

/** A partition table as `sfdisk --json` reports it (the fields read here). */
export interface ExistingTable {
  /** `gpt`, `dos`, … */
  readonly label: string;
  readonly partitions: readonly { readonly name?: string | undefined; readonly type: string }[];
}

/** What the disk holds, as the installer's probes saw it. */
export type DiskContent =
  | { readonly kind: 'table'; readonly table: ExistingTable }
  /** No partition table; `signatures` are what `wipefs` finds (a filesystem, a RAID member …). */
  | { readonly kind: 'bare'; readonly signatures: readonly string[] };

export type DiskVerdict =
  | { readonly kind: 'empty' }
  | { readonly kind: 'molt' }
  | { readonly kind: 'foreign'; readonly reason: string };

/** Judge what a disk holds: nothing, molt's table, or someone else's data (and what). */
export function judgeDisk(content: DiskContent): DiskVerdict {
  if (content.kind === 'bare')
    return content.signatures.length === 0
      ? { kind: 'empty' }
      : {
          kind: 'foreign',
          reason: `it holds no partition table but ${content.signatures.join(', ')}`,
        };
  const { table } = content;
  if (table.label !== 'gpt')
    return { kind: 'foreign', reason: `it holds a ${table.label} partition table, not GPT` };
  const names = table.partitions.map((p) => p.name ?? '');
  const same =
    names.length === PartitionOrder.length && names.every((n, i) => n === PartitionOrder[i]);
  if (same) return { kind: 'molt' };
  if (names.length === 0) return { kind: 'foreign', reason: 'it holds an empty GPT' };
  return {
    kind: 'foreign',
    reason: `its GPT partitions are ${names.map((n) => (n === '' ? '(unnamed)' : n)).join(', ')}, not ${PartitionOrder.join(', ')}`,
  };
}

/** Refuse to write over a disk that is not molt's unless `wipe`; `disk` names it in the error. */
export function requireInstallable(verdict: DiskVerdict, wipe: boolean, disk: string): void {
  if (verdict.kind !== 'foreign' || wipe) return;
  throw new MoltError(ErrorCode.DiskNotMolt, `${disk} is not molt's: ${verdict.reason}`, {
    hint: `check that ${disk} is the disk you mean; add --wipe to replace everything on it`,
  });
}
