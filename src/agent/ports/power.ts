// SPDX-License-Identifier: Apache-2.0
/** Reboots the machine. In the lab: the agent exits with `LabExit.Reboot` and the firmware boots again. */
export interface Power {
  reboot(reason: string): Promise<never>;
}
