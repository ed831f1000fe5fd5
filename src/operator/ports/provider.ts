// SPDX-License-Identifier: Apache-2.0
/**
 * A machine provider (docs/adr/0005, "Replace strategy"): an extension outside molt that replaces
 * a machine from scratch — re-images it, or swaps it for a new one on the same endpoint — instead
 * of upgrading it in place through its agent. Pools with `strategy: replace` use it for every
 * machine; in-place pools that configure one fall back to it when the agent cannot apply a
 * release. The adapter (`adapters/http-provider`) speaks a tiny JSON protocol over HTTP.
 *
 * Errors are `MoltError`s: `MOLT_PROVIDER_UNREACHABLE` (retryable: transport, timeout, 5xx) and
 * `MOLT_PROVIDER_FAILED` (the provider refused the request, or answered something that is not
 * the protocol).
 */
import type { MachineRecord } from './store.ts';

/** What to put on the machine: the installer image by digest, and the release it is. */
export interface ReplaceRequest {
  readonly image: string;
  readonly digest: string;
  readonly version: string;
}

/** Where a replace operation is. `message` says why it failed (or what it is doing). */
export interface ProviderOperation {
  readonly state: 'running' | 'succeeded' | 'failed';
  readonly message?: string;
}

export interface MachineProvider {
  /**
   * Start replacing `machine`. Idempotent per machine and digest: asking again while a replace of
   * the same machine to the same digest runs answers that operation's id (so an operator that
   * lost the answer may simply ask again).
   */
  replace(machine: MachineRecord, request: ReplaceRequest): Promise<{ operationId: string }>;
  status(machine: MachineRecord, operationId: string): Promise<ProviderOperation>;
}
