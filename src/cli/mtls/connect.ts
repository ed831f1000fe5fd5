// SPDX-License-Identifier: Apache-2.0
/**
 * How the CLI reaches a daemon's mTLS API (`molt node` the agent, `molt rollout|machine` the
 * operator): `--endpoint` and the client certificate by flag, else environment (the endpoint
 * variable is the daemon's; MOLT_CERT, MOLT_KEY, MOLT_CA for both), else the chosen context of the
 * CLI config file (`contexts.ts`; its operator, certificates and default output), checked locally
 * first (`material.ts`), then requests over node:https (`https-fetch.ts`). Transport failures become
 * MOLT_TLS_REJECTED (not retried) or the daemon's `…_UNREACHABLE` (retryable: an agent reboots, an operator fails over).
 */
import { z } from 'zod';
import { ErrorCode, MoltError, type AgentFetch } from '../../protocol/index.ts';
import { outputFormats, type OutputFormat } from '../output.ts';
import { parseFlags, timeoutFlag, type CliEnv } from '../flags.ts';
import { loadMaterial } from './material.ts';
import type { DaemonPeer } from './peer.ts';
import { classifyTransport } from './transport-errors.ts';
import { createHttpsFetch } from './https-fetch.ts';
import { connectionSettings } from './settings.ts';

const schema = z.object({
  endpoint: z
    .string()
    .min(1, 'is empty')
    .transform((v) => (/^[a-z]+:\/\//i.test(v) ? v : `https://${v}`))
    .pipe(z.url({ protocol: /^https$/, message: 'must be an https:// URL or host:port' })),
  cert: z.string().min(1).optional(),
  key: z.string().min(1).optional(),
  ca: z.string().min(1).optional(),
  timeout: timeoutFlag,
  output: z.enum([...outputFormats, 'wide']).default('table'),
});

/** A ready protocol client of one daemon, and how to print. */
export interface DaemonConnection<C> {
  readonly client: C;
  readonly output: OutputFormat;
  /** `-o wide`: a table (`output` is `table`) with more columns. */
  readonly wide: boolean;
  /** Let the connection go, once no request is in flight (after `withConnection`'s `run`). */
  close(): Promise<void>;
  /** Drop every connection now, a request in flight too (ctrl-C during a follow or watch). */
  readonly abort: () => Promise<void>;
}

/** Run `run` over the connection `opening` makes, closed afterwards whatever `run` does. */
export async function withConnection<C>(
  opening: Promise<DaemonConnection<C>>,
  run: (c: DaemonConnection<C>) => Promise<void>,
): Promise<void> {
  const connection = await opening;
  try {
    await run(connection);
  } finally {
    await connection.close();
  }
}

/** Creates a protocol client (`createAgentClient`, `createOperatorClient`) on the transport. */
export type ClientFactory<C> = (o: { baseUrl: string; fetch: AgentFetch }) => C;

/**
 * Validate the connection flags (environment, then the context, fill what flags omit) and open
 * a client.
 */
export async function connectMtls<C>(
  raw: Record<string, unknown>,
  env: CliEnv,
  peer: DaemonPeer,
  createClient: ClientFactory<C>,
): Promise<DaemonConnection<C>> {
  const o = parseFlags(schema, await connectionSettings(raw, env, peer));
  if ((o.cert === undefined) !== (o.key === undefined))
    throw new MoltError(
      ErrorCode.BadFlag,
      'give both --cert and --key (or MOLT_CERT and MOLT_KEY), or neither',
    );
  const url = new URL(o.endpoint);
  const tls = await loadMaterial(o, peer, url);
  const https = createHttpsFetch({
    tls,
    timeoutMs: o.timeout,
    // Followed streams get a keep-alive comment every 15 s; a minute of silence is a dead daemon.
    bodyTimeoutMs: peer.quietStreams === true ? 0 : Math.max(o.timeout, 60_000),
  });
  const letGo = (): Promise<void> => {
    https.destroy();
    return Promise.resolve();
  };
  const mtlsFetch: AgentFetch = async (target, init) => {
    try {
      return await https.fetch(target, init);
    } catch (e) {
      throw await classifyTransport(e, { peer, url, tls, caPath: o.ca });
    }
  };
  return {
    client: createClient({ baseUrl: url.origin, fetch: mtlsFetch }),
    output: o.output === 'wide' ? 'table' : o.output,
    wide: o.output === 'wide',
    close: letGo,
    abort: letGo,
  };
}
