// SPDX-License-Identifier: Apache-2.0
/** Where `molt lab …` writes: standard output and standard error (bin/molt.ts passes the real ones). */
export interface LabIo {
  out(line: string): void;
  err(line: string): void;
  /**
   * The environment (where the CLI config file is: `molt lab up` writes the `lab` context there);
   * the process's own when absent.
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
}
