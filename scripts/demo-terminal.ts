// SPDX-License-Identifier: Apache-2.0
// The demo's terminal: colours only on a TTY, and the time since the demo started.
export const tty = process.stdout.isTTY;
const paint = (code: string) => (s: string) => (tty ? `\x1b[${code}m${s}\x1b[0m` : s);
export const bold = paint('1');
export const dim = paint('2');
export const green = paint('32');
export const red = paint('31');

export const started = performance.now();
export const elapsed = (): string =>
  dim(`[${String(Math.round((performance.now() - started) / 1000)).padStart(4)}s]`);

/** The steps that did not happen as a demo announced (its exit code). */
export const failures: string[] = [];

/** Print a step's outcome; a step that did not happen is remembered in {@link failures}. */
export function check(ok: boolean, what: string): void {
  console.log(ok ? `  ${green('✔')} ${what}` : `  ${red('✘ NOT AS EXPECTED:')} ${what}`);
  if (!ok) failures.push(what);
}

/** molt's output streams for commands a demo runs in-process: both go to stdout. */
export const demoIo = {
  out: (line: string): boolean => process.stdout.write(line),
  err: (line: string): boolean => process.stdout.write(line),
};
