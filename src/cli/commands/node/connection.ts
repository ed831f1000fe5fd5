// SPDX-License-Identifier: Apache-2.0
/**
 * How `molt node` reaches an agent: `--endpoint` and the client certificate by flag or environment,
 * checked locally first (expired, wrong CA, key mismatch), then undici `fetch` over an mTLS
 * `Agent`. Transport failures become MOLT_TLS_REJECTED (not retried) or MOLT_AGENT_UNREACHABLE
 * (retryable: the agent may be rebooting).
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Agent, fetch } from 'undici';
import { z } from 'zod';
import {
  ErrorCode,
  MoltError,
  createAgentClient,
  type AgentClient,
  type AgentFetch,
} from '../../../protocol/index.ts';
import { outputFormats, type OutputFormat } from '../../output.ts';
import { parseFlags, type CliEnv } from '../registry-flags.ts';
import { classifyTransport } from './transport-errors.ts';
import type { TlsMaterial } from './tls-probe.ts';

const schema = z.object({
  endpoint: z
    .string()
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
export interface NodeConnection {
  readonly client: AgentClient;
  readonly output: OutputFormat;
  close(): Promise<void>;
}

/** Validate the connection flags (environment fills what flags omit) and open a client. */
export async function connectToAgent(
  raw: Record<string, unknown>,
  env: CliEnv,
): Promise<NodeConnection> {
  const o = parseFlags(schema, {
    ...raw,
    endpoint: raw['endpoint'] ?? env['MOLT_ENDPOINT'],
    cert: raw['cert'] ?? env['MOLT_CERT'],
    key: raw['key'] ?? env['MOLT_KEY'],
    ca: raw['ca'] ?? env['MOLT_CA'],
  });
  if ((o.cert === undefined) !== (o.key === undefined)) {
    throw new MoltError(
      ErrorCode.BadFlag,
      'give both --cert and --key (or MOLT_CERT and MOLT_KEY), or neither',
    );
  }
  const tls = await loadMaterial(o);
  const url = new URL(o.endpoint);
  const agent = new Agent({
    connect: { ...tls, timeout: o.timeout },
    headersTimeout: o.timeout,
    // Following streams get a keep-alive comment every 15 s; a minute of silence is a dead agent.
    bodyTimeout: Math.max(o.timeout, 60_000),
  });
  const mtlsFetch: AgentFetch = async (target, init) => {
    try {
      const res = await fetch(target, { ...init, dispatcher: agent });
      return { status: res.status, text: () => res.text(), body: res.body };
    } catch (e) {
      throw await classifyTransport(e, { url, tls, hasClientCert: tls.cert !== undefined });
    }
  };
  return {
    client: createAgentClient({ baseUrl: url.origin, fetch: mtlsFetch }),
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

/** PEM blocks of a bundle. */
const pemBlocks = (text: string): string[] =>
  text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];

/** Read the files and refuse, before any connection, what the agent would refuse anyway. */
async function loadMaterial(o: {
  cert?: string | undefined;
  key?: string | undefined;
  ca?: string | undefined;
}): Promise<TlsMaterial> {
  const ca = o.ca === undefined ? undefined : await readText(o.ca, 'CA bundle');
  const cas = ca === undefined ? [] : pemBlocks(ca).map((p) => parseCert(p, o.ca ?? ''));
  if (ca !== undefined && cas.length === 0)
    throw new MoltError(ErrorCode.PkiInvalid, `${o.ca ?? ''} holds no PEM certificate`);
  if (o.cert === undefined || o.key === undefined) return { ...(ca !== undefined && { ca }) };
  const cert = await readText(o.cert, 'certificate');
  const key = await readText(o.key, 'private key');
  checkClientCertificate({
    certPath: o.cert,
    cert: parseCert(cert, o.cert),
    key,
    keyPath: o.key,
    cas,
    caPath: o.ca,
  });
  return { cert, key, ...(ca !== undefined && { ca }) };
}

function parseCert(pem: string, path: string): X509Certificate {
  try {
    return new X509Certificate(pem);
  } catch (e) {
    throw new MoltError(ErrorCode.PkiInvalid, `${path} is not a PEM certificate`, { cause: e });
  }
}

interface ClientCheck {
  readonly certPath: string;
  readonly cert: X509Certificate;
  readonly key: string;
  readonly keyPath: string;
  readonly cas: readonly X509Certificate[];
  readonly caPath: string | undefined;
}

function checkClientCertificate(c: ClientCheck): void {
  const now = new Date();
  const reissue =
    'issue a new one with `molt pki issue --ca-dir <fleet CA> --role operator --name <you>`';
  if (c.cert.validToDate < now) {
    throw new MoltError(
      ErrorCode.TlsRejected,
      `client certificate ${c.certPath} expired on ${c.cert.validToDate.toISOString()}; the agent would refuse it`,
      { hint: reissue },
    );
  }
  if (c.cert.validFromDate > now) {
    throw new MoltError(
      ErrorCode.TlsRejected,
      `client certificate ${c.certPath} is not valid before ${c.cert.validFromDate.toISOString()}`,
      { hint: 'check this machine’s clock' },
    );
  }
  if (
    c.cas.length > 0 &&
    !c.cas.some((ca) => c.cert.checkIssued(ca) && c.cert.verify(ca.publicKey))
  ) {
    throw new MoltError(
      ErrorCode.TlsRejected,
      `client certificate ${c.certPath} was not issued by the CA in ${c.caPath ?? ''} (a foreign certificate); the agent would refuse it`,
      { hint: reissue },
    );
  }
  let matches: boolean;
  try {
    matches = c.cert.checkPrivateKey(createPrivateKey(c.key));
  } catch (e) {
    throw new MoltError(ErrorCode.PkiInvalid, `${c.keyPath} is not a PEM private key`, {
      cause: e,
    });
  }
  if (!matches)
    throw new MoltError(
      ErrorCode.PkiInvalid,
      `${c.keyPath} is not the private key of ${c.certPath}`,
    );
}
