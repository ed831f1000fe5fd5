// SPDX-License-Identifier: Apache-2.0
/**
 * How `molt rollout` and `molt machine` reach the operator API: the shared mTLS connection
 * (`mtls/connect.ts`) with `--endpoint` from MOLT_OPERATOR.
 */
import { createOperatorClient, type OperatorClient } from '../../../protocol/index.ts';
import { connectMtls, type DaemonConnection } from '../../mtls/connect.ts';
import { OperatorPeer } from '../../mtls/peer.ts';
import type { CliEnv } from '../../flags.ts';

/** A ready operator client and how to print. */
export type OperatorConnection = DaemonConnection<OperatorClient>;

/** Validate the connection flags (environment fills what flags omit) and open a client. */
export function connectToOperator(
  raw: Record<string, unknown>,
  env: CliEnv,
): Promise<OperatorConnection> {
  return connectMtls(raw, env, OperatorPeer, createOperatorClient);
}
