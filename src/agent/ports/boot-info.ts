// SPDX-License-Identifier: Apache-2.0
/** Facts of the current boot: its id (a new one per boot) and the slot the bootloader chose. */
import type { SlotId } from '../../core/slots/slot.ts';

export interface BootInfo {
  readonly bootId: string;
  readonly slot: SlotId;
}
