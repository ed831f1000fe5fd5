// SPDX-License-Identifier: Apache-2.0
/** Lab images may declare `dev.molt.lab.health=never`: the booted slot then never becomes healthy. */
import type { SlotId } from '../../../core/slots/slot.ts';
import type { HealthCheck } from '../../ports/health-check.ts';
import type { SlotStore } from '../../ports/slot-store.ts';

export function labSlotHealth(slots: SlotStore, booted: SlotId): HealthCheck {
  return {
    name: 'lab-slot-health',
    async run() {
      const manifest = await slots.manifest(booted);
      if (manifest?.lab?.health === 'never') {
        return {
          name: 'lab-slot-health',
          status: 'failing',
          message: `slot ${booted} (${manifest.version}) is built never to become healthy`,
        };
      }
      return { name: 'lab-slot-health', status: 'ok', message: `slot ${booted} reports healthy` };
    },
  };
}
