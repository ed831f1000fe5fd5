// SPDX-License-Identifier: Apache-2.0
/**
 * Where the agent keeps the machine's hold (docs/adr/0004 §11), so that it survives agent restarts
 * and reboots: on a real machine in STATE, beside the journal (`state/hold.json`).
 */
import type { HoldView } from '../../protocol/agent-hold.ts';

export interface HoldStore {
  /**
   * The hold last saved, expired or not; undefined when there is none. A record the agent did not
   * write (edited by hand) is MOLT_MACHINE_INVALID naming the file, like the journal's.
   */
  load(): Promise<HoldView | undefined>;
  /** Replace the hold atomically (a power cut leaves the old or the new one); undefined clears it. */
  save(hold: HoldView | undefined): Promise<void>;
}
