// SPDX-License-Identifier: Apache-2.0
/**
 * Reading `slot.json` and `staged.json` back (docs/adr/0004 §2), and generation numbering. Both
 * files are molt's own, but they live on disk across crashes and upgrades of molt itself, so a
 * file that does not parse is `MOLT_MACHINE_INVALID` naming the field, never a crash later on.
 */
import { ErrorCode, MoltError } from '../errors.ts';
import { isArtifactName } from './contract.ts';
import type {
  ArtifactName,
  ArtifactRecord,
  LabBehaviour,
  SlotId,
  SlotManifest,
  SlotStatus,
} from './slot.ts';

/** An artifact as a pull staged it (its path follows from its name: see `layout.ts`). */
export interface StagedArtifact {
  readonly size: number;
  readonly digest: string;
  readonly layerDigest?: string;
}

/** `slots/<x>.next/staged.json`: a complete, verified pull. */
export interface StagedRecord {
  readonly schema: 1;
  readonly slot: SlotId;
  readonly imageRef: string;
  readonly imageDigest: string;
  readonly manifestDigest: string;
  readonly version: string;
  /** The release's `molt.dev/kubelet-version` label, when it has one. */
  readonly kubeletVersion?: string;
  readonly lab?: LabBehaviour;
  readonly artifacts: Partial<Record<ArtifactName, StagedArtifact>>;
  /** ISO 8601. */
  readonly pulledAt: string;
  /** Set by `install` before it moves anything, so a re-run after a crash keeps the same number. */
  readonly generation?: number;
}

type Obj = Readonly<Record<string, unknown>>;

class Reader {
  readonly what: string;
  constructor(what: string) {
    this.what = what;
  }
  fail(field: string, expected: string): never {
    throw new MoltError(
      ErrorCode.MachineInvalid,
      `${this.what}: field ${field} is not ${expected}`,
      {
        hint: 'the file was damaged or written by an incompatible molt; re-write the slot with an upgrade',
      },
    );
  }
  obj(v: unknown, field: string): Obj {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) this.fail(field, 'an object');
    return v as Obj;
  }
  str(o: Obj, field: string): string {
    const v = o[field];
    return typeof v === 'string' && v.length > 0 ? v : this.fail(field, 'a non-empty string');
  }
  optStr(o: Obj, field: string): string | undefined {
    return o[field] === undefined ? undefined : this.str(o, field);
  }
  int(o: Obj, field: string, min = 0): number {
    const v = o[field];
    return Number.isSafeInteger(v) && (v as number) >= min
      ? (v as number)
      : this.fail(field, `an integer ≥ ${min}`);
  }
  oneOf<T extends string>(o: Obj, field: string, values: readonly T[]): T {
    const v = o[field];
    return (values as readonly unknown[]).includes(v)
      ? (v as T)
      : this.fail(field, `one of ${values.join(', ')}`);
  }
}

function artifacts<T>(
  r: Reader,
  v: unknown,
  one: (o: Obj, field: string) => T,
): Partial<Record<ArtifactName, T>> {
  const o = r.obj(v, 'artifacts');
  const out: Partial<Record<ArtifactName, T>> = {};
  for (const [name, value] of Object.entries(o)) {
    if (!isArtifactName(name)) r.fail(`artifacts.${name}`, 'an artifact name');
    out[name] = one(r.obj(value, `artifacts.${name}`), `artifacts.${name}`);
  }
  return out;
}

function staged(parent: Reader, o: Obj, field: string): StagedArtifact {
  const r = new Reader(`${parent.what} ${field}`);
  const layerDigest = r.optStr(o, 'layerDigest');
  return {
    size: r.int(o, 'size'),
    digest: r.str(o, 'digest'),
    ...(layerDigest !== undefined && { layerDigest }),
  };
}

function lab(r: Reader, v: unknown): LabBehaviour | undefined {
  if (v === undefined) return undefined;
  const o = r.obj(v, 'lab');
  return {
    boot: r.oneOf(o, 'boot', ['ok', 'fail']),
    health: r.oneOf(o, 'health', ['ok', 'never']),
  };
}

function common(r: Reader, o: Obj) {
  if (o['schema'] !== 1) r.fail('schema', '1');
  const l = lab(r, o['lab']);
  const kubeletVersion = r.optStr(o, 'kubeletVersion');
  return {
    schema: 1 as const,
    slot: r.oneOf(o, 'slot', ['A', 'B'] as const),
    imageRef: r.str(o, 'imageRef'),
    imageDigest: r.str(o, 'imageDigest'),
    version: r.str(o, 'version'),
    ...(kubeletVersion !== undefined && { kubeletVersion }),
    ...(l !== undefined && { lab: l }),
  };
}

/** Validate a parsed `slot.json`; throws `MOLT_MACHINE_INVALID`. */
export function parseSlotManifest(v: unknown, what = 'slot.json'): SlotManifest {
  const r = new Reader(what);
  const o = r.obj(v, '(root)');
  const badReason = r.optStr(o, 'badReason');
  const manifestDigest = r.optStr(o, 'manifestDigest');
  return {
    ...common(r, o),
    status: r.oneOf<SlotStatus>(o, 'status', ['ready', 'writing', 'bad']),
    ...(badReason !== undefined && { badReason }),
    ...(manifestDigest !== undefined && { manifestDigest }),
    generation: r.int(o, 'generation', 1),
    artifacts: artifacts(r, o['artifacts'], (a, f): ArtifactRecord => ({
      ...staged(r, a, f),
      path: new Reader(`${what} ${f}`).str(a, 'path'),
    })),
    operationId: r.str(o, 'operationId'),
    writtenAt: r.str(o, 'writtenAt'),
  };
}

/** Validate a parsed `staged.json`; throws `MOLT_MACHINE_INVALID`. */
export function parseStagedRecord(v: unknown, what = 'staged.json'): StagedRecord {
  const r = new Reader(what);
  const o = r.obj(v, '(root)');
  const generation = o['generation'] === undefined ? undefined : r.int(o, 'generation', 1);
  return {
    ...common(r, o),
    manifestDigest: r.str(o, 'manifestDigest'),
    artifacts: artifacts(r, o['artifacts'], (a, f) => staged(r, a, f)),
    pulledAt: r.str(o, 'pulledAt'),
    ...(generation !== undefined && { generation }),
  };
}

/** The generation for the next write: one more than any slot's, so it strictly increases across both. */
export function nextGeneration(manifests: readonly (SlotManifest | undefined)[]): number {
  return 1 + Math.max(0, ...manifests.map((m) => m?.generation ?? 0));
}
