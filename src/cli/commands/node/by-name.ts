// SPDX-License-Identifier: Apache-2.0
/**
 * A machine named on the command line (`molt node status cp-1`): its agent's endpoint from the
 * operator's inventory (`GET /v1/machines`), reached with the same certificate, from `--operator`,
 * MOLT_OPERATOR or the context. A context's `agentPort` replaces the inventory's port (the
 * operator may reach agents at ports this workstation cannot).
 */
import {
  ErrorCode,
  MoltError,
  createOperatorClient,
  isMoltError,
  type MachineView,
} from '../../../protocol/index.ts';
import { chooseContext } from '../../contexts.ts';
import type { CliEnv } from '../../flags.ts';
import { connectMtls, withConnection } from '../../mtls/connect.ts';
import { OperatorPeer } from '../../mtls/peer.ts';
import { requireMachine } from '../../names.ts';

/** The agent endpoint of machine `name`, as the operator's inventory lists it. */
export async function agentEndpointOf(
  name: string,
  raw: Record<string, unknown>,
  env: CliEnv,
): Promise<string> {
  if (raw['endpoint'] !== undefined)
    throw new MoltError(ErrorCode.BadFlag, `give machine ${name} or --endpoint, not both`, {
      hint: 'a name is looked up in the operator’s inventory; --endpoint is the agent itself',
    });
  const operator = { ...raw, endpoint: raw['operator'], output: undefined };
  let machines: MachineView[] = [];
  let where = 'the operator';
  try {
    await withConnection(
      connectMtls(operator, env, OperatorPeer, createOperatorClient),
      async ({ client }) => {
        where = `the operator at ${client.baseUrl}`;
        machines = await client.machines();
      },
    );
  } catch (e) {
    throw isMoltError(e, ErrorCode.NoEndpoint)
      ? new MoltError(e.code, `no operator is configured to find machine ${name} in`, {
          hint: `${e.hint ?? ''}; or give the agent itself: --endpoint https://HOST:PORT`,
        })
      : e;
  }
  const id = requireMachine(
    name,
    machines.map((m) => m.id),
    where,
  );
  const endpoint = machines.find((m) => m.id === id)?.endpoint ?? '';
  const port = (await chooseContext(env, flag(raw['context'])))?.context.agentPort;
  return port === undefined ? endpoint : withPort(endpoint, port);
}

function withPort(endpoint: string, port: number): string {
  const url = new URL(endpoint);
  url.port = String(port);
  return url.origin;
}

const flag = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
