// SPDX-License-Identifier: Apache-2.0
/**
 * Cluster API's own rule for "is this update covered" (v1.14: KCP `matchesMachine`, MachineDeployment
 * `matchesMachineSetSpec`, both over `inplace.CleanupMachineSpecForDiff`), as pure functions: the
 * Machine spec is compared without the fields that never cause an in-place update, every provider
 * object's spec is compared whole. molt runs it on *current with molt's change* against desired, so
 * molt offers a patch only where CAPI would then go in place.
 *
 * CAPI compares decoded Go values, molt compares JSON: where Go would see an absent field and its
 * zero value as equal, molt sees a difference and says "replace" — conservative, never wrong in place.
 */

/** A JSON object, as CAPI sends specs. */
export type JsonObject = Readonly<Record<string, unknown>>;

/**
 * Machine spec fields CAPI blanks before comparing (`CleanupMachineSpecForDiff`): they never change,
 * are not the extension's business, or are mutated in place without a rollout.
 */
export const IgnoredMachineSpecFields = [
  'clusterName',
  'bootstrap',
  'infrastructureRef',
  'providerID',
  'minReadySeconds',
  'readinessGates',
  'taints',
] as const;

/** `spec.deletion` timeouts CAPI blanks too (the rest of `deletion` is compared). */
export const IgnoredDeletionFields = [
  'nodeDrainTimeoutSeconds',
  'nodeVolumeDetachTimeoutSeconds',
  'nodeDeletionTimeoutSeconds',
] as const;

/** A Machine spec as CAPI compares it: the ignored fields removed. */
export function machineSpecForDiff(spec: JsonObject): JsonObject {
  const out = without(spec, IgnoredMachineSpecFields);
  const deletion = out['deletion'];
  if (!isObject(deletion)) return out;
  const d = without(deletion, IgnoredDeletionFields);
  return Object.keys(d).length === 0 ? without(out, ['deletion']) : { ...out, deletion: d };
}

function without(o: JsonObject, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)));
}

/** Deep equality of JSON values (object key order ignored, array order kept). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (!isObject(a) || !isObject(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
}

/** The names of the top-level fields where two specs differ, sorted (for messages). */
export function differingFields(a: JsonObject, b: JsonObject): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].filter((k) => !jsonEqual(a[k], b[k])).sort();
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
