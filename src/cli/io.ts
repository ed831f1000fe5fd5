// SPDX-License-Identifier: Apache-2.0
/**
 * The CLI's window on the world: streams and environment are passed in, so commands run
 * in-process in tests exactly as they do from the binary.
 */
export interface CliIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Colours and progress only when a person is watching. */
  readonly isTty: boolean;
  /**
   * Call `handler` on ctrl-C (SIGINT) instead of dying; returns the function that stops listening.
   * Only commands that watch or follow ask, and end with exit 0 when it comes.
   */
  readonly onInterrupt: (handler: () => void) => () => void;
}

/**
 * The process's own streams and environment. When the reader of stdout goes away (`molt node
 * events --follow | head`), molt ends quietly, as `cat` does, instead of dying on EPIPE with a
 * stack trace.
 */
export function processIo(): CliIo {
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
    process.exit(0);
  });
  return {
    out: (t) => process.stdout.write(t),
    err: (t) => process.stderr.write(t),
    env: process.env,
    isTty: process.stdout.isTTY,
    onInterrupt: (handler) => {
      process.once('SIGINT', handler);
      return () => process.off('SIGINT', handler);
    },
  };
}

/** Exit codes molt's client verbs use. */
export const ExitCode = {
  Ok: 0,
  Error: 1,
  /** `molt releases latest` found no eligible release. */
  NoEligibleRelease: 3,
} as const;

/**
 * An in-memory {@link CliIo}: runs molt in-process (tests, the demo) and keeps what it printed;
 * `interrupt()` plays a ctrl-C.
 */
export function memoryIo(env: Readonly<Record<string, string | undefined>> = {}): CliIo & {
  stdout(): string;
  stderr(): string;
  interrupt(): void;
} {
  let out = '';
  let err = '';
  const handlers = new Set<() => void>();
  return {
    out: (t) => (out += t),
    err: (t) => (err += t),
    env,
    isTty: false,
    onInterrupt: (handler) => {
      handlers.add(handler);
      return () => handlers.delete(handler);
    },
    stdout: () => out,
    stderr: () => err,
    interrupt: () => {
      for (const h of [...handlers]) h();
    },
  };
}
