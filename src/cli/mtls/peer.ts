// SPDX-License-Identifier: Apache-2.0
/**
 * The daemons the CLI reaches over mutual TLS: `molt node` the agent, `molt rollout|machine` the
 * operator. Both take the same flags and certificates; errors name the daemon, its endpoint
 * variable and its own unreachable code.
 */
import { ErrorCode } from '../../protocol/index.ts';

/** A daemon as the CLI's connection errors name it. */
export interface DaemonPeer {
  readonly name: 'agent' | 'operator';
  /** The environment variable that fills `--endpoint`. */
  readonly endpointEnv: string;
  /** The code of a daemon that cannot be reached (retryable). */
  readonly unreachable: ErrorCode;
  /** What to check when it cannot be reached. */
  readonly unreachableHint: string;
  /**
   * Answers that may stay silent for long (a followed service log is plain text, without the
   * event streams' keep-alive comments): no body timeout; the person ends them.
   */
  readonly quietStreams?: boolean;
}

export const AgentPeer: DaemonPeer = {
  name: 'agent',
  endpointEnv: 'MOLT_ENDPOINT',
  unreachable: ErrorCode.AgentUnreachable,
  unreachableHint:
    'check --endpoint (MOLT_ENDPOINT) and that the agent is running; it is away while it reboots',
};

export const OperatorPeer: DaemonPeer = {
  name: 'operator',
  endpointEnv: 'MOLT_OPERATOR',
  unreachable: ErrorCode.OperatorUnreachable,
  unreachableHint:
    'is `molt operator` running, with `listen` in its config, at --endpoint (MOLT_OPERATOR)? In a lab: `molt lab status`',
};
