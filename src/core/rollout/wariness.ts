// SPDX-License-Identifier: Apache-2.0
/**
 * Stable hashes (ADR 0005 §1): a machine's wariness (its position in a phased rollout) and the
 * order of machines inside a rollout. FNV-1a 32-bit over the UTF-16 code units: no randomness, no
 * platform dependence, so `molt plan` and the executor agree on every machine and every run.
 */
import type { Machine } from './types.ts';

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const TWO_POW_32 = 4_294_967_296;

/** FNV-1a 32-bit of `s`, as an unsigned integer. */
export function fnv1a(s: string): number {
  return fnv1aFrom(FNV_OFFSET, s) >>> 0;
}

/** Continues an FNV-1a hash `h` over `s` (so keys are hashed without building strings). */
function fnv1aFrom(h: number, s: string): number {
  let x = h;
  for (let i = 0; i < s.length; i++) {
    x ^= s.charCodeAt(i);
    x = Math.imul(x, FNV_PRIME);
  }
  return x;
}

/** A stable position in [0, 1) derived from the machine id. */
export function hashWariness(machineId: string): number {
  return fnv1a(machineId) / TWO_POW_32;
}

/** The machine's wariness: its own value when set, else the hash of its id. */
export function warinessOf(machine: Machine): number {
  return machine.wariness ?? hashWariness(machine.id);
}

/**
 * The ordering key of a machine in a rollout. Salting with the rollout id spreads successive
 * rollouts over different machines first, as SUC's `hash(node, plan)` does.
 */
export function orderHash(rolloutId: string, machineId: string): number {
  // Same value as fnv1a(`${rolloutId}\u0000${machineId}`): XOR with 0 leaves h, then one multiply.
  const h = Math.imul(fnv1aFrom(FNV_OFFSET, rolloutId), FNV_PRIME);
  return fnv1aFrom(h, machineId) >>> 0;
}
