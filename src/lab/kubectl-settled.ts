// SPDX-License-Identifier: Apache-2.0
/**
 * kubectl against a lab's API server, retried a while: an API server that just came up on a TCG
 * VM answers, then times out a large request (the CRDs) or its OpenAPI download for minutes while
 * its neighbours boot. Every call made through here is idempotent (apply, wait), so running it
 * again is the same request.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { eventually } from '../platform/process/managed-process.ts';

const run = promisify(execFile);

/** Run `kubectl --kubeconfig <kubeconfig> <args…>` until it succeeds or `timeoutMs` passed. */
export async function kubectlSettled(
  kubectl: string,
  kubeconfig: string,
  args: readonly string[],
  timeoutMs = 10 * 60_000,
): Promise<void> {
  await eventually(() => run(kubectl, ['--kubeconfig', kubeconfig, ...args]), {
    timeoutMs,
    intervalMs: 5_000,
  });
}
