// SPDX-License-Identifier: Apache-2.0
/**
 * {@link MachineProvider} over HTTP (docs/adr/0005, "Replace strategy"). The protocol, JSON both
 * ways, relative to the pool's `provider.url`:
 *
 * - `POST {url}/v1/replace` with `{machine, endpoint, image, digest, version}` (the machine id,
 *   its agent's endpoint, the installer image by digest and the release version) → `202
 *   {operationId}` (200 is accepted too). The provider must answer the running operation's id
 *   when asked again for the same machine and digest while it runs.
 * - `GET {url}/v1/replace/{operationId}` → `200 {state: 'running' | 'succeeded' | 'failed',
 *   message?}`. `succeeded` means the machine was re-imaged and booted; the operator then waits
 *   for its agent to answer on the target digest before it counts the machine done.
 * - Any other status is an error; a JSON body `{code?, message}` is quoted in the error.
 *
 * Transport failures, timeouts and 5xx become `MOLT_PROVIDER_UNREACHABLE` (retryable: the
 * operator asks again next pass); 4xx and answers that are not the protocol become
 * `MOLT_PROVIDER_FAILED`. Redirects are not followed (a provider that moved is configuration). An
 * address with a user or password is refused (molt sends no credentials to a provider), and no
 * error quotes them (`core/redact.ts`).
 */
import { fetch } from 'undici';
import { ErrorCode, errorMessage, MoltError } from '../../../core/errors.ts';
import type { HttpProviderSettings } from '../../../core/rollout/types.ts';
import type { MachineProvider, ProviderOperation } from '../../ports/provider.ts';

const STATES: ReadonlySet<string> = new Set(['running', 'succeeded', 'failed']);

const record = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : undefined;

function failed(what: string, message: string): MoltError {
  return new MoltError(ErrorCode.ProviderFailed, `${what}: ${message}`, {
    hint: 'check the provider named by the pool (provider.url) and its logs',
  });
}

/** One request; transport failures and timeouts are `MOLT_PROVIDER_UNREACHABLE`. */
async function send(
  s: HttpProviderSettings,
  what: string,
  path: string,
  init: { method: 'GET' | 'POST'; body?: unknown },
): Promise<{ status: number; text: string }> {
  // The schema refuses such an address; one made elsewhere must fail clearly, not be retried.
  if (/^[a-z]+:\/\/[^/?#]*@/i.test(s.url))
    throw failed(what, 'the provider address carries a user or password, which molt never sends');
  try {
    const res = await fetch(`${s.url.replace(/\/+$/, '')}${path}`, {
      method: init.method,
      redirect: 'manual',
      signal: AbortSignal.timeout(s.timeoutMs ?? 10_000),
      ...(init.body !== undefined && {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(init.body),
      }),
    });
    return { status: res.status, text: await res.text() };
  } catch (e) {
    const inner = e instanceof Error && e.cause instanceof Error ? `: ${e.cause.message}` : '';
    throw new MoltError(
      ErrorCode.ProviderUnreachable,
      `${what}: provider at ${s.url} unreachable: ${errorMessage(e)}${inner}`,
      { cause: e, retryable: true },
    );
  }
}

function parse(text: string): Record<string, unknown> | undefined {
  try {
    return record(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/** A 2xx JSON object, or the error its status calls for (5xx retryable, the rest refused). */
async function call(
  s: HttpProviderSettings,
  what: string,
  path: string,
  init: { method: 'GET' | 'POST'; body?: unknown },
): Promise<Record<string, unknown>> {
  const { status, text } = await send(s, what, path, init);
  const body = parse(text);
  if (status >= 200 && status < 300) {
    if (body === undefined) throw failed(what, `HTTP ${String(status)} without a JSON object`);
    return body;
  }
  const said = typeof body?.['message'] === 'string' ? `: ${body['message']}` : '';
  const message = `provider answered HTTP ${String(status)}${said}`;
  if (status >= 500)
    throw new MoltError(ErrorCode.ProviderUnreachable, `${what}: ${message}`, { retryable: true });
  throw failed(what, message);
}

export function createHttpProvider(settings: HttpProviderSettings): MachineProvider {
  return {
    async replace(machine, request) {
      const what = `replace ${machine.id}`;
      const body = await call(settings, what, '/v1/replace', {
        method: 'POST',
        body: { machine: machine.id, endpoint: machine.endpoint, ...request },
      });
      const id = body['operationId'];
      if (typeof id !== 'string' || id === '') throw failed(what, 'the answer has no operationId');
      return { operationId: id };
    },
    async status(machine, operationId) {
      const what = `replace ${machine.id} (operation ${operationId})`;
      const path = `/v1/replace/${encodeURIComponent(operationId)}`;
      const body = await call(settings, what, path, { method: 'GET' });
      const state = body['state'];
      if (typeof state !== 'string' || !STATES.has(state))
        throw failed(what, `state ${JSON.stringify(state)} is not running, succeeded or failed`);
      const message = body['message'];
      return {
        state: state as ProviderOperation['state'],
        ...(typeof message === 'string' && { message }),
      };
    },
  };
}
