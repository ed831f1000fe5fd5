// SPDX-License-Identifier: Apache-2.0
/**
 * Facts of the current boot: its id (a new one per boot), the slot the bootloader chose, and the
 * kernel log a boot since the last one left when it panicked (pstore), if any.
 */
import type { SlotId } from '../../core/slots/slot.ts';

export interface BootInfo {
  readonly bootId: string;
  readonly slot: SlotId;
  readonly crash?: string;
}
