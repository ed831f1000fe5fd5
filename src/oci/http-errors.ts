// SPDX-License-Identifier: Apache-2.0
import { ErrorCode, MoltError, connectFailure, type MoltErrorOptions } from '../protocol/index.ts';

/** What a request was about, so every error names the registry and the content. */
export interface RequestSubject {
  /** `host[:port]` of the registry. */
  readonly registry: string;
  /** e.g. `manifest acme/installer:1.8.0`, `tags of acme/installer`. */
  readonly what: string;
}

/** Options of {@link RegistryError}: the HTTP status, and how long the registry asked to wait. */
export interface RegistryErrorOptions extends MoltErrorOptions {
  readonly status?: number;
  readonly retryAfterMs?: number;
}

/** A {@link MoltError} from talking to a registry; carries the HTTP status and `Retry-After` for the retry loop. */
export class RegistryError extends MoltError {
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(code: ErrorCode, message: string, options: RegistryErrorOptions = {}) {
    super(code, message, options);
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/**
 * Summarise an error body for a message. JSON bodies follow `{"errors":[{code,message,detail}]}`;
 * anything else (2.8.2's router answers `404 page not found` as text/plain) is shown as text.
 */
export function describeErrorBody(text: string): string {
  try {
    const parsed = JSON.parse(text) as { errors?: { code?: unknown; message?: unknown }[] };
    if (Array.isArray(parsed.errors) && parsed.errors.length > 0) {
      return parsed.errors
        .map((e) => [e.code, e.message].filter((x) => typeof x === 'string' && x !== '').join(': '))
        .join('; ');
    }
  } catch {
    // not JSON: fall through to the text
  }
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

/** Parse `Retry-After` (seconds or an HTTP date) into milliseconds from `now`. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Inputs of {@link errorForStatus}. */
export interface StatusFailure {
  readonly status: number;
  readonly body: string;
  readonly retryAfterMs?: number;
  readonly hasCredentials: boolean;
  /** The hint when the owner's credentials were withheld from this registry ({@link RegistryClientOptions.withheldCredentials}). */
  readonly withheldCredentials?: string | undefined;
}

/** Map a non-success HTTP status to a coded, human-readable error. */
export function errorForStatus(subject: RequestSubject, f: StatusFailure): RegistryError {
  const detail = describeErrorBody(f.body);
  const suffix = detail === '' ? `HTTP ${f.status}` : `HTTP ${f.status}: ${detail}`;
  const { registry, what } = subject;
  const base = {
    status: f.status,
    ...(f.retryAfterMs !== undefined && { retryAfterMs: f.retryAfterMs }),
  };
  if (f.status === 401)
    return unauthorized(`registry ${registry} refused access to ${what} (${suffix})`, f, base);
  if (f.status === 403) {
    return new RegistryError(
      ErrorCode.RegistryForbidden,
      `registry ${registry} denied access to ${what} (${suffix})`,
      {
        ...base,
        hint: 'the credentials are valid but lack permission for this repository',
      },
    );
  }
  if (f.status === 404)
    return new RegistryError(
      ErrorCode.RegistryNotFound,
      `${what} not found on registry ${registry} (${suffix})`,
      base,
    );
  if (f.status === 429) {
    return new RegistryError(
      ErrorCode.RegistryRateLimited,
      `registry ${registry} rate-limited the request for ${what} (${suffix})`,
      {
        ...base,
        retryable: true,
        hint: 'wait and try again, or authenticate to get a higher rate limit',
      },
    );
  }
  if (f.status >= 500) {
    return new RegistryError(
      ErrorCode.RegistryServerError,
      `registry ${registry} failed to serve ${what} (${suffix})`,
      { ...base, retryable: true },
    );
  }
  const invalid = f.status === 400 && /MANIFEST_(INVALID|BLOB_UNKNOWN)/.test(detail);
  return new RegistryError(
    invalid ? ErrorCode.ManifestInvalid : ErrorCode.RegistryProtocol,
    `registry ${registry} rejected the request for ${what} (${suffix})`,
    base,
  );
}

/** Map a transport failure (refused, reset, DNS, TLS, timeout) to a retryable coded error. */
export function errorForTransport(
  subject: RequestSubject,
  cause: unknown,
  timeoutMs: number | undefined,
): RegistryError {
  if (timeoutMs !== undefined || isUndiciTimeout(cause)) {
    const within = timeoutMs === undefined ? 'in time' : `within ${timeoutMs} ms`;
    return new RegistryError(
      ErrorCode.RegistryTimeout,
      `registry ${subject.registry} did not answer the request for ${subject.what} ${within}`,
      {
        cause,
        retryable: true,
        hint: 'the registry is slow or unreachable; raise --timeout or try again later',
      },
    );
  }
  const failure = connectFailure(cause);
  if (failure.code !== undefined && plainHttpCodes.has(failure.code))
    return new RegistryError(
      ErrorCode.RegistryPlainHttp,
      `registry ${subject.registry} speaks plain HTTP, not HTTPS (${subject.what}: ${failure.code})`,
      {
        cause,
        hint: 'use --insecure for a plain-HTTP registry (loopback and lab registries only: nothing is encrypted or verified)',
      },
    );
  return new RegistryError(
    ErrorCode.RegistryUnreachable,
    `cannot reach registry ${subject.registry} for ${subject.what}: ${failure.text}`,
    {
      cause,
      retryable: true,
      hint: 'check the registry address, the network and (for https) the certificate; use --insecure only for plain-HTTP loopback registries',
    },
  );
}

/** undici's own header and body (idle) timeouts, possibly wrapped in fetch's `TypeError: fetch failed`. */
function isUndiciTimeout(e: unknown): boolean {
  const codes = [e, e instanceof Error ? e.cause : undefined].map((x) =>
    x instanceof Error ? (x as { code?: unknown }).code : undefined,
  );
  return codes.some((c) => c === 'UND_ERR_BODY_TIMEOUT' || c === 'UND_ERR_HEADERS_TIMEOUT');
}

/**
 * What OpenSSL says when the answer to its ClientHello is not TLS: an HTTP response (`HTTP/1.1 400`)
 * read as a TLS record. A plain-HTTP server is by far the likeliest peer to answer so.
 */
const plainHttpCodes = new Set(['ERR_SSL_WRONG_VERSION_NUMBER', 'ERR_SSL_PACKET_LENGTH_TOO_LONG']);

/** The final error after `attempts` tries: same code, the attempt count appended for the reader. */
export function afterAttempts(e: RegistryError, attempts: number): RegistryError {
  if (attempts <= 1) return e;
  return new RegistryError(e.code, `${e.message}; gave up after ${attempts} attempts`, {
    cause: e.cause,
    retryable: e.retryable,
    ...(e.hint !== undefined && { hint: e.hint }),
    ...(e.status !== undefined && { status: e.status }),
  });
}

function unauthorized(
  message: string,
  f: StatusFailure,
  base: RegistryErrorOptions,
): RegistryError {
  if (!f.hasCredentials && f.withheldCredentials !== undefined)
    return withheldError(message, f.withheldCredentials, base);
  const hint = f.hasCredentials
    ? 'check the username and password'
    : 'this registry needs credentials: pass --username and --password';
  return new RegistryError(ErrorCode.RegistryUnauthorized, message, { ...base, hint });
}

/**
 * A registry asked for credentials the owner gave but molt did not send: the owner's config, not
 * the registry, is what to fix.
 */
export function withheldError(
  refusal: string,
  hint: string,
  base: RegistryErrorOptions = {},
): RegistryError {
  return new RegistryError(
    ErrorCode.RegistryCredentialsWithheld,
    `${refusal}; molt holds registry credentials but sent them nowhere`,
    { ...base, hint },
  );
}
