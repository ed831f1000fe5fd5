// SPDX-License-Identifier: Apache-2.0
/**
 * The `molt operator` process of this checkout with a `capi:` listener (docs/adr/0014), for the
 * tests that call its Cluster API extension: resolves once it printed where its API and its
 * extension serve (both without a trailing slash).
 */
import { startProcess, type ManagedProcess } from '../platform/process/managed-process.ts';
import { OperatorCapiPrefix, OperatorServingPrefix } from '../protocol/operator.ts';
import { moltArgv } from './molt-entry.ts';

export interface CapiOperator {
  readonly process: ManagedProcess;
  /** `https://127.0.0.1:<port>`: the operator's API. */
  readonly api: string;
  /** `https://127.0.0.1:<port>`: its Cluster API extension. */
  readonly extension: string;
}

export async function startCapiOperator(config: string): Promise<CapiOperator> {
  const [node = process.execPath, ...entry] = moltArgv;
  const operator = startProcess('molt operator', node, [...entry, 'operator', '--config', config]);
  const printed = async (prefix: string): Promise<string> =>
    ((await operator.waitFor(new RegExp(`${prefix}(\\S+)`), 60_000))[1] ?? '').replace(/\/$/, '');
  try {
    return {
      process: operator,
      api: await printed(OperatorServingPrefix),
      extension: await printed(OperatorCapiPrefix),
    };
  } catch (e) {
    await operator.stop(5_000);
    throw e;
  }
}
