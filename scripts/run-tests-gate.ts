// SPDX-License-Identifier: Apache-2.0
/**
 * What holds a lane of scripts/run-tests.ts back: on a fresh machine scripts/test.sh builds the
 * Kubernetes binaries beside the run (about 20 minutes on two cores), and only the lanes marked
 * `beforeKubernetes` (test/lanes.ts) start before that build is done.
 */
import { runBuildScript } from '../src/platform/kube/binaries.ts';
import type { Lane } from '../test/lanes.ts';

export interface Gate {
  /** Whether a file of `lane` may start now. */
  mayStart(lane: Lane): boolean;
  /** Why the files still held back will never start (the build failed); else undefined. */
  failed(): string | undefined;
  /** Settles when what holds lanes back is over (done or failed). */
  readonly over: Promise<void>;
}

/** Every lane may start (the binaries are built, or the run needs none). */
export const open: Gate = {
  mayStart: () => true,
  failed: () => undefined,
  over: Promise.resolve(),
};

/**
 * Lanes wait for `ensure-kube-bins.sh`, which answers once the build running beside this run
 * (holding the script's lock) is done, or at once from its cache; `announce` hears when.
 */
export function kubernetesBuilt(announce: (line: string) => void): Gate {
  let state: { ok: true } | { ok: false; why: string } | undefined;
  const over = runBuildScript('ensure-kube-bins.sh', []).then(
    (dir) => {
      announce(`Kubernetes binaries ready: ${dir}`);
      state = { ok: true };
    },
    (e: unknown) => {
      state = { ok: false, why: `the Kubernetes build failed: ${String(e)}` };
    },
  );
  return {
    mayStart: (lane) => lane.beforeKubernetes === true || state?.ok === true,
    failed: () => (state?.ok === false ? state.why : undefined),
    over,
  };
}
