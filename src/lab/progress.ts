// SPDX-License-Identifier: Apache-2.0
/** How `molt lab up` shows the lab daemon's progress. */
import type { LabIo } from './io.ts';

const dim = (s: string): string => (process.stderr.isTTY ? `\x1b[2m${s}\x1b[0m` : s);

const spinner = '⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏';

export interface ProgressPrinter {
  /** Print the daemon's new lines, then redraw the spinner (terminal only). */
  show(lines: readonly string[]): void;
  /** Clear the spinner; returns `result`. */
  done<T>(result: T): T;
}

/**
 * The daemon's progress lines with the elapsed time; on a terminal also a spinner line under them,
 * redrawn in place every poll and cleared before each new line, so a long step (the first
 * Kubernetes build) visibly moves. Logs and pipes get the lines only.
 */
export function progressPrinter(io: LabIo, started: number): ProgressPrinter {
  const live = process.stderr.isTTY;
  const state = { frame: 0, drawn: false };
  const clear = (): void => {
    if (state.drawn) io.err('\r\x1b[2K');
    state.drawn = false;
  };
  return {
    show(lines: readonly string[]): void {
      const seconds = Math.round((performance.now() - started) / 1000);
      const stamp = dim(`[${String(seconds).padStart(4)}s]`);
      if (lines.length > 0) clear();
      for (const l of lines) io.err(`${stamp} ${l}\n`);
      if (!live) return;
      clear();
      state.frame = (state.frame + 1) % spinner.length;
      io.err(`${stamp} ${spinner[state.frame] ?? ''} ${dim('working…')}`);
      state.drawn = true;
    },
    done<T>(result: T): T {
      clear();
      return result;
    },
  };
}
