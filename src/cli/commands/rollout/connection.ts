// SPDX-License-Identifier: Apache-2.0
/**
 * How `molt rollout` and `molt machine` reach the operator API: `--endpoint` (env MOLT_OPERATOR)
 * and the client certificate by flag or environment (MOLT_CERT, MOLT_KEY, MOLT_CA) as `molt node`
 * takes them, checked locally first (unreadable, not a certificate, key mismatch, expired), then
 * undici `fetch` over an mTLS `Agent`. Transport failures become MOLT_TLS_REJECTED (the operator
 * refused us, or we refused it) or MOLT_OPERATOR_UNREACHABLE (retryable).
 *
 * The shape of `node/connection.ts`, not shared with it: that one's messages and codes name the
 * agent. A later refactor can give both one `mtlsFetch(kind)`.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Agent, fetch } from 'undici';
import { z } from 'zod';
import {
  ErrorCode,
  MoltError,
  createOperatorClient,
  type OperatorClient,
  type OperatorFetch,
} from '../../../protocol/index.ts';
import type { CliEnv } from '../registry-flags.ts';
import { parseFlags } from '../registry-flags.ts';
import { outputFormats, type OutputFormat } from '../../output.ts';
import { probeTls, type TlsMaterial } from '../node/tls-probe.ts';

const schema = z.object({
  endpoint: z
    .string({ message: 'is required (or set MOLT_OPERATOR)' })
    .min(1, 'is empty')
    .transform((v) => (/^[a-z]+:\/\//i.test(v) ? v : `https://${v}`))
    .pipe(z.url({ protocol: /^https$/, message: 'must be an https:// URL or host:port' })),
  cert: z.string().min(1).optional(),
  key: z.string().min(1).optional(),
  ca: z.string().min(1).optional(),
  timeout: z.coerce
    .number({ message: 'must be a number of milliseconds' })
    .int()
    .min(100, 'must be at least 100 ms')
    .max(600_000),
  output: z.enum(outputFormats).default('table'),
});

/** A ready client and how to print. */
export interface OperatorConnection {
  readonly client: OperatorClient;
  readonly output: OutputFormat;
  close(): Promise<void>;
}

/** Validate the connection flags (environment fills what flags omit) and open a client. */
export async function connectToOperator(
  raw: Record<string, unknown>,
  env: CliEnv,
): Promise<OperatorConnection> {
  const o = parseFlags(schema, {
    ...raw,
    endpoint: raw['endpoint'] ?? env['MOLT_OPERATOR'],
    cert: raw['cert'] ?? env['MOLT_CERT'],
    key: raw['key'] ?? env['MOLT_KEY'],
    ca: raw['ca'] ?? env['MOLT_CA'],
  });
  if ((o.cert === undefined) !== (o.key === undefined))
    throw new MoltError(
      ErrorCode.BadFlag,
      'give both --cert and --key (or MOLT_CERT and MOLT_KEY), or neither',
    );
  const tls = await loadMaterial(o);
  const url = new URL(o.endpoint);
  const agent = new Agent({
    connect: { ...tls, timeout: o.timeout },
    headersTimeout: o.timeout,
    // Followed streams get a keep-alive comment every 15 s; a minute of silence is a dead operator.
    bodyTimeout: Math.max(o.timeout, 60_000),
  });
  const mtlsFetch: OperatorFetch = async (target, init) => {
    try {
      const res = await fetch(target, { ...init, dispatcher: agent });
      return { status: res.status, text: () => res.text(), body: res.body };
    } catch (e) {
      throw await classify(e, url, tls);
    }
  };
  return {
    client: createOperatorClient({ baseUrl: url.origin, fetch: mtlsFetch }),
    output: o.output,
    close: () => agent.close(),
  };
}

async function readText(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    throw new MoltError(
      ErrorCode.PkiInvalid,
      `cannot read ${what} ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`,
      { cause: e },
    );
  }
}

function certificate(pem: string, path: string): X509Certificate {
  try {
    return new X509Certificate(pem);
  } catch (e) {
    throw new MoltError(ErrorCode.PkiInvalid, `${path} is not a PEM certificate`, { cause: e });
  }
}

/** Read the files; refuse, before connecting, a certificate the operator would refuse anyway. */
async function loadMaterial(o: {
  cert?: string | undefined;
  key?: string | undefined;
  ca?: string | undefined;
}): Promise<TlsMaterial> {
  const ca = o.ca === undefined ? undefined : await readText(o.ca, 'CA bundle');
  if (o.cert === undefined || o.key === undefined) return { ...(ca !== undefined && { ca }) };
  const cert = await readText(o.cert, 'certificate');
  const key = await readText(o.key, 'private key');
  const x509 = certificate(cert, o.cert);
  if (x509.validToDate < new Date())
    throw new MoltError(
      ErrorCode.TlsRejected,
      `client certificate ${o.cert} expired on ${x509.validToDate.toISOString()}; the operator would refuse it`,
      {
        hint: 'issue a new one with `molt pki issue --ca-dir <fleet CA> --role operator --name <you>`',
      },
    );
  let matches: boolean;
  try {
    matches = x509.checkPrivateKey(createPrivateKey(key));
  } catch (e) {
    throw new MoltError(ErrorCode.PkiInvalid, `${o.key} is not a PEM private key`, { cause: e });
  }
  if (!matches)
    throw new MoltError(ErrorCode.PkiInvalid, `${o.key} is not the private key of ${o.cert}`);
  return { cert, key, ...(ca !== undefined && { ca }) };
}

function errorCode(e: unknown): string | undefined {
  for (let x: unknown = e; x instanceof Error; x = x.cause) {
    const code = (x as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

const certHint =
  'the operator accepts only unexpired certificates issued by its fleet CA (`molt pki issue`); check --cert/--key (MOLT_CERT/MOLT_KEY) and --ca (MOLT_CA)';

/**
 * A failed request as a MoltError. With TLS 1.3 a refused client certificate reaches undici as a
 * closed socket, so an ambiguous failure re-does a bare handshake (`node/tls-probe.ts`): closed at
 * once means refused, kept open means the operator was merely going away.
 */
async function classify(e: unknown, url: URL, tls: TlsMaterial): Promise<MoltError> {
  const code = errorCode(e);
  const where = `the operator at ${url.origin}`;
  if (code !== undefined && /^ERR_SSL_|CERT|SIGNATURE|ALTNAME/.test(code)) {
    return new MoltError(ErrorCode.TlsRejected, `${where}: TLS failed (${code})`, {
      cause: e,
      hint: certHint,
    });
  }
  if (
    code !== undefined &&
    ['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE', 'UND_ERR_CLOSED'].includes(code)
  ) {
    const probe = await probeTls(url, tls);
    if (probe.kind === 'rejected')
      return new MoltError(ErrorCode.TlsRejected, `${where} refused the client certificate`, {
        cause: e,
        hint: certHint,
      });
  }
  return new MoltError(
    ErrorCode.OperatorUnreachable,
    `cannot reach ${where}: ${code ?? (e instanceof Error ? e.message : String(e))}`,
    {
      cause: e,
      retryable: true,
      hint: 'check --endpoint (MOLT_OPERATOR) and that `molt operator` runs with `listen` in its config',
    },
  );
}
