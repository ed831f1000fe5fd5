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
