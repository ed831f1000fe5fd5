// SPDX-License-Identifier: Apache-2.0
/** What every command factory receives (cli/main.ts builds it); commands never import main.ts. */
import type { CliIo } from './io.ts';

/** Context every command factory receives; `setExitCode` records the code the process ends with. */
export interface CommandContext {
  readonly io: CliIo;
  setExitCode(code: number): void;
}
