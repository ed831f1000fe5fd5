// SPDX-License-Identifier: Apache-2.0
/**
 * Where a command's connection settings come from, field by field: the flag, else the environment
 * (the daemon's endpoint variable; MOLT_CERT, MOLT_KEY, MOLT_CA), else the chosen context of the
 * CLI config (`--context NAME`, else the current one; docs/adr/0010). A context names an operator,
 * never an agent: agents are reached by `--endpoint`, MOLT_ENDPOINT or a machine's name.
 */
import type { CliEnv } from '../flags.ts';
import { chooseContext } from '../contexts.ts';
import { noEndpoint } from './no-endpoint.ts';
import type { DaemonPeer } from './peer.ts';

/** A string flag's value, if given. */
const given = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The flags with every connection setting filled in; MOLT_NO_ENDPOINT when no endpoint is known. */
export async function connectionSettings(
  raw: Record<string, unknown>,
  env: CliEnv,
  peer: DaemonPeer,
): Promise<Record<string, unknown>> {
  const c = (await chooseContext(env, given(raw['context'])))?.context;
  const pick = (flag: string, variable: string, context: string | undefined): string | undefined =>
    given(raw[flag]) ?? env[variable] ?? context;
  const endpoint = pick(
    'endpoint',
    peer.endpointEnv,
    peer.name === 'operator' ? c?.operator : undefined,
  );
  if (endpoint === undefined) throw noEndpoint(peer);
  return {
    ...raw,
    endpoint,
    cert: pick('cert', 'MOLT_CERT', c?.cert),
    key: pick('key', 'MOLT_KEY', c?.key),
    ca: pick('ca', 'MOLT_CA', c?.ca),
    output: given(raw['output']) ?? c?.output,
  };
}
