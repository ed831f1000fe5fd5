// SPDX-License-Identifier: Apache-2.0
/**
 * Cluster API's check of a CanUpdate* answer, re-implemented for tests independently of molt's core
 * (CAPI v1.14 `inplace_canupdatemachine.go`, `machinedeployment_canupdatemachineset.go`): decode
 * each base64 patch, apply it to the *current* object, copy back only the spec (spec.template.spec
 * for MachineSets and templates), blank the Machine spec fields `CleanupMachineSpecForDiff` blanks,
 * and compare with desired. Equal: CAPI updates in place; otherwise it replaces.
 *
 * No JSON Patch library is in package.json, and molt emits only `replace` and `add`, so this applier
 * knows those two (anything else throws, so a test notices); pulling in a dependency for tests alone
 * was not worth it.
 */
import { Buffer } from 'node:buffer';
import { isDeepStrictEqual } from 'node:util';

type Json = Record<string, unknown>;
interface Patch {
  readonly patchType: string;
  readonly patch: string;
}

/** Apply RFC 6902 `replace`/`add` operations to a copy of `doc`. */
export function applyJsonPatch(
  doc: unknown,
  ops: readonly { op: string; path: string; value?: unknown }[],
): unknown {
  const out = structuredClone(doc);
  for (const { op, path, value } of ops) {
    if (op !== 'replace' && op !== 'add') throw new Error(`test applier: op ${op} not supported`);
    const keys = path
      .split('/')
      .slice(1)
      .map((k) => k.replaceAll('~1', '/').replaceAll('~0', '~'));
    const last = keys.pop();
    if (last === undefined) throw new Error('test applier: empty path');
    let at = out as Json;
    for (const k of keys) at = at[k] as Json;
    if (op === 'replace' && !Object.hasOwn(at, last)) throw new Error(`replace of missing ${path}`);
    at[last] = value;
  }
  return out;
}

function patched(current: unknown, patch: Patch | undefined): unknown {
  if (patch === undefined) return current;
  if (patch.patchType !== 'JSONPatch') throw new Error('test applier: JSONPatch only');
  return applyJsonPatch(
    current,
    JSON.parse(Buffer.from(patch.patch, 'base64').toString('utf8')) as never,
  );
}

function cleanMachineSpec(spec: unknown): unknown {
  const ignored: readonly string[] = [
    'clusterName',
    'bootstrap',
    'infrastructureRef',
    'providerID',
    'minReadySeconds',
    'readinessGates',
    'taints',
  ];
  return Object.fromEntries(Object.entries(spec as Json).filter(([k]) => !ignored.includes(k)));
}

const at = (o: unknown, ...path: string[]): unknown =>
  path.reduce<unknown>((x, k) => (x as Json | undefined)?.[k], o);

/** Whether CAPI would update a Machine in place after this CanUpdateMachine answer. */
export function capiAcceptsMachine(req: { current: Json; desired: Json }, res: Json): boolean {
  const pairs: [string, string, boolean][] = [
    ['machine', 'machinePatch', true],
    ['infrastructureMachine', 'infrastructureMachinePatch', false],
    ['bootstrapConfig', 'bootstrapConfigPatch', false],
  ];
  return pairs.every(([obj, patch, isMachine]) => {
    const p = at(patched(req.current[obj], res[patch] as Patch | undefined), 'spec');
    const d = at(req.desired[obj], 'spec');
    return isMachine
      ? isDeepStrictEqual(cleanMachineSpec(p), cleanMachineSpec(d))
      : isDeepStrictEqual(p, d);
  });
}

/** Whether CAPI would move Machines between these MachineSets in place after this answer. */
export function capiAcceptsMachineSet(req: { current: Json; desired: Json }, res: Json): boolean {
  const pairs: [string, string, boolean][] = [
    ['machineSet', 'machineSetPatch', true],
    ['infrastructureMachineTemplate', 'infrastructureMachineTemplatePatch', false],
    ['bootstrapConfigTemplate', 'bootstrapConfigTemplatePatch', false],
  ];
  return pairs.every(([obj, patch, isMachine]) => {
    const p = at(
      patched(req.current[obj], res[patch] as Patch | undefined),
      'spec',
      'template',
      'spec',
    );
    const d = at(req.desired[obj], 'spec', 'template', 'spec');
    return isMachine
      ? isDeepStrictEqual(cleanMachineSpec(p), cleanMachineSpec(d))
      : isDeepStrictEqual(p, d);
  });
}
