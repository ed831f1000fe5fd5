// SPDX-License-Identifier: Apache-2.0
/**
 * The error of a command that found nothing to talk to. It names every way to say where the
 * daemon is — a flag, the environment, a context — because a newcomer knows none of them yet
 * (`--endpoint is required` named only the one they were least likely to use).
 */
import { ErrorCode, MoltError } from '../../protocol/index.ts';
import type { DaemonPeer } from './peer.ts';

/** MOLT_NO_ENDPOINT for `peer`, with the ways to configure it. */
export function noEndpoint(peer: DaemonPeer): MoltError {
  if (peer.name === 'agent')
    return new MoltError(ErrorCode.NoEndpoint, 'no agent is named: give a machine or an endpoint', {
      hint:
        'name the machine (`molt node status cp-1`: its agent is found through the operator of the current context or MOLT_OPERATOR), ' +
        'or give --endpoint https://HOST:PORT, or set MOLT_ENDPOINT',
    });
  return new MoltError(ErrorCode.NoEndpoint, 'no operator is configured', {
    hint:
      'give --endpoint https://HOST:PORT, or set MOLT_OPERATOR (with MOLT_CERT, MOLT_KEY, MOLT_CA), ' +
      'or use a context: `molt config use-context NAME` (`molt lab up` writes one named lab; ' +
      '`molt config set-context` and `molt pki issue --context` add others)',
  });
}
