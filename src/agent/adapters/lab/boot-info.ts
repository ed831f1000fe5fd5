// SPDX-License-Identifier: Apache-2.0
/**
 * Which boot this is and which slot the lab firmware booted: the environment it starts the agent
 * with (`MOLT_LAB_CMDLINE`, the boot entry's command line; `MOLT_LAB_BOOT_ID`), read as a real
 * machine reads `/proc` (../proc-boot-info).
 */
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { LabEnv } from '../../../protocol/agent.ts';
import type { BootInfo } from '../../ports/boot-info.ts';
import { slotFromCmdline } from '../proc-boot-info/index.ts';

export function readLabBootInfo(env: NodeJS.ProcessEnv): BootInfo {
  const cmdline = env[LabEnv.Cmdline];
  const bootId = env[LabEnv.BootId];
  if (cmdline === undefined || bootId === undefined)
    throw new MoltError(
      ErrorCode.MachineInvalid,
      `the lab firmware sets ${LabEnv.Cmdline} and ${LabEnv.BootId}; this process has not both`,
      { hint: 'start lab machines with `molt lab machine`' },
    );
  return { bootId, slot: slotFromCmdline(cmdline) };
}
