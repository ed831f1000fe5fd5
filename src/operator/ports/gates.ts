// SPDX-License-Identifier: Apache-2.0
/**
 * Health gates (docs/adr/0005 §2): custom checks the operator runs every pass, before it
 * starts machines and after each machine it upgraded. The adapter (`adapters/http-gate`) does an
 * HTTP GET; tests pass a function. A probe never throws: a failure is a failing result.
 */
import type { GateResult, Policy } from '../../core/rollout/types.ts';

export type GatePolicy = Extract<Policy, { kind: 'gate' }>;

export interface GateProbe {
  check(gate: GatePolicy): Promise<GateResult>;
}
