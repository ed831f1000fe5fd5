// SPDX-License-Identifier: Apache-2.0
/** Lab power: the agent exits with `LabExit.Reboot` and the lab firmware boots the machine again. */
import { LabExit } from '../../../protocol/agent.ts';
import type { Power } from '../../ports/power.ts';

export function createLabPower(beforeExit: () => Promise<void>): Power {
  return {
    async reboot(): Promise<never> {
      await beforeExit();
      process.exit(LabExit.Reboot);
    },
  };
}
