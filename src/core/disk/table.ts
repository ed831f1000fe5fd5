// SPDX-License-Identifier: Apache-2.0
/**
 * "Is this disk molt's?" (docs/real-machines.md §1): a partition table is molt's when it is GPT
 * with exactly the five names in order. Anything else that is on the disk — another table, a
 * filesystem written straight onto it — belongs to someone, and the installer replaces it only
 * when told to (`--wipe`), so a mistyped device name never costs anyone their data. Molt's layout
 * is not enough to make a disk free: one whose STATE holds anything is a machine's (its node key,
 * config and journal; EPHEMERAL its etcd data), and is replaced only when told that
 * (`--overwrite-machine`). A layout whose STATE holds no filesystem, or an empty one, is what an
 * interrupted install leaves, and is reused.
 */
import { ErrorCode, MoltError } from '../errors.ts';
import { PartitionOrder } from './layout.ts';

/** A partition table as `sfdisk --json` reports it (the fields read here). */
export interface ExistingTable {
  /** `gpt`, `dos`, … */
  readonly label: string;
  readonly partitions: readonly { readonly name?: string | undefined; readonly type: string }[];
}

/** What the partition named `molt-state` holds, as the installer's probes saw it. */
export interface StateContent {
  /** The filesystem (or other signature) found on it; absent: none. */
  readonly filesystem?: string;
  /** The names in its root directory, `lost+found` left out; absent: it could not be listed. */
  readonly entries?: readonly string[];
  /** The `node` its `config.yaml` names, when it has one. */
  readonly node?: string;
}

/** What the disk holds, as the installer's probes saw it. */
export type DiskContent =
  | {
      readonly kind: 'table';
      readonly table: ExistingTable;
      /** Read for molt's layout ({@link isMoltLayout}). */
      readonly state?: StateContent;
    }
  /** No partition table; `signatures` are what `wipefs` finds (a filesystem, a RAID member …). */
  | { readonly kind: 'bare'; readonly signatures: readonly string[] };

export type DiskVerdict =
  | { readonly kind: 'empty' }
  /** Molt's layout with nothing on STATE: an interrupted install, reused as it is. */
  | { readonly kind: 'molt' }
  /** Molt's layout whose STATE holds a machine: `holds` says what, `node` whose. */
  | { readonly kind: 'machine'; readonly holds: string; readonly node?: string }
  | { readonly kind: 'foreign'; readonly reason: string };

/** Molt's layout: a machine's disk unless STATE holds nothing at all. */
function judgeState(state: StateContent | undefined): DiskVerdict {
  if (state?.filesystem === undefined) return { kind: 'molt' };
  const { filesystem, entries, node } = state;
  // A filesystem that cannot be listed may hold anything: it counts as a machine's.
  if (entries === undefined)
    return { kind: 'machine', holds: `its STATE holds ${filesystem}, which molt cannot list` };
  if (entries.length === 0) return { kind: 'molt' };
  const whose = node === undefined ? 'a machine' : `the machine ${node}`;
  return {
    kind: 'machine',
    holds: `its STATE holds ${whose} (${entries.join(', ')})`,
    ...(node !== undefined && { node }),
  };
}

/** GPT with exactly molt's five partition names, in order. */
export function isMoltLayout(table: ExistingTable): boolean {
  const names = table.partitions.map((p) => p.name ?? '');
  return (
    table.label === 'gpt' &&
    names.length === PartitionOrder.length &&
    names.every((n, i) => n === PartitionOrder[i])
  );
}

/** Judge what a disk holds: nothing, molt's layout (free, or a machine's), or someone else's data. */
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
  if (isMoltLayout(table)) return judgeState(content.state);
  const names = table.partitions.map((p) => p.name ?? '');
  if (names.length === 0) return { kind: 'foreign', reason: 'it holds an empty GPT' };
  return {
    kind: 'foreign',
    reason: `its GPT partitions are ${names.map((n) => (n === '' ? '(unnamed)' : n)).join(', ')}, not ${PartitionOrder.join(', ')}`,
  };
}

/** What the person asked to be replaced. */
export interface InstallConsent {
  /** A partition table or filesystem that is not molt's (`--wipe`). */
  readonly wipe: boolean;
  /** A machine: molt's layout with STATE in use (`--overwrite-machine`). */
  readonly overwriteMachine: boolean;
}

/**
 * Refuse to write over someone else's data, or over a machine, unless told that very thing; `disk`
 * names it in the error. `--wipe` does not replace a machine: a script that passes it to clear new
 * disks would otherwise destroy any machine whose device name was mistyped.
 */
export function requireInstallable(
  verdict: DiskVerdict,
  consent: InstallConsent,
  disk: string,
): void {
  if (verdict.kind === 'foreign' && !consent.wipe)
    throw new MoltError(ErrorCode.DiskNotMolt, `${disk} is not molt's: ${verdict.reason}`, {
      hint: `check that ${disk} is the disk you mean; add --wipe to replace everything on it`,
    });
  if (verdict.kind === 'machine' && !consent.overwriteMachine)
    throw new MoltError(
      ErrorCode.DiskHoldsMachine,
      `${disk} is a molt machine's disk: ${verdict.holds}`,
      {
        hint: `check that ${disk} is the disk you mean: installing replaces that machine's keys, config and journal, and its EPHEMERAL data (etcd, kubelet); add --overwrite-machine to replace it (--wipe does not)`,
      },
    );
}
