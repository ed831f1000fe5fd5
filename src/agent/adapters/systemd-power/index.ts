// SPDX-License-Identifier: Apache-2.0
/**
 * Power on a real machine: asks systemd to reboot. The agent's own shutdown runs first (API closed,
 * lease keep-alive stopped — the lease itself stays, held across the reboot by design); the process
 * then waits to be stopped by systemd.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import type { Power } from '../../ports/power.ts';

const run = promisify(execFile);

export function createSystemdPower(beforeReboot: () => Promise<void>): Power {
  return {
    async reboot(reason: string): Promise<never> {
      await beforeReboot();
      try {
        await run('systemctl', ['reboot', `--message=molt: ${reason}`]);
      } catch (error) {
        throw new MoltError(
          ErrorCode.Internal,
          `systemctl reboot failed: ${(error as Error).message}`,
          { cause: error },
        );
      }
      // Stay alive until systemd stops the agent (SIGTERM; main.ts's handler ends the daemon):
      // with its API closed the process would otherwise exit at once with an unsettled top-level
      // await (exit code 13), a failed unit in the log of every upgrade.
      const keepAlive = setInterval(() => undefined, 3_600_000);
      process.once('SIGTERM', () => {
        clearInterval(keepAlive);
      });
      return new Promise<never>(() => undefined);
    },
  };
}
