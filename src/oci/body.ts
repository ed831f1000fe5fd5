// SPDX-License-Identifier: Apache-2.0
import type { MoltError } from '../protocol/index.ts';
import { digestMismatch, hasherFor } from './digest.ts';
import { errorForTransport, type RequestSubject } from './http-errors.ts';

/** The part of a fetch `Response` the body readers need. */
export interface BodySource {
  readonly headers: { get(name: string): string | null };
  readonly body: ReadableStream<Uint8Array> | null;
}

/**
 * Read a whole body, refusing more than `limit` bytes: first by `Content-Length`, then while
 * reading, because a lying or absent length must not let a registry fill molt's memory.
 */
export async function readLimited(
  res: BodySource,
  limit: number,
  tooLarge: (size: number) => MoltError,
): Promise<Uint8Array> {
  const declared = Number(res.headers.get('content-length') ?? Number.NaN);
  if (declared > limit) {
    await res.body?.cancel().catch(() => undefined);
    throw tooLarge(declared);
  }
  if (res.body === null) return new Uint8Array(0);
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(total);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** Read at most `limit` bytes of an error body as text; never throws (the status already says enough). */
export async function readErrorText(res: BodySource, limit = 64 * 1024): Promise<string> {
  if (res.body === null) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (
      let r = await reader.read();
      !r.done;
      r = total < limit ? await reader.read() : { done: true, value: undefined }
    ) {
      chunks.push(r.value);
      total += r.value.byteLength;
    }
    await reader.cancel();
  } catch {
    // a broken error body: the status code alone will have to do
  }
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}

/** Drop a body we do not need, so its connection goes back to the pool. */
export async function discard(res: BodySource): Promise<void> {
  await res.body?.cancel().catch(() => undefined);
}

/**
 * Pass `source` through while hashing it; at its end, error with MOLT_DIGEST_MISMATCH unless the
 * bytes hash to `digest`. Transport failures mid-stream become MOLT_REGISTRY_UNREACHABLE.
 */
export function verifyingStream(
  source: ReadableStream<Uint8Array>,
  digest: string,
  subject: RequestSubject,
): ReadableStream<Uint8Array> {
  const hash = hasherFor(digest);
  const reader = source.getReader();
  const algorithm = digest.slice(0, digest.indexOf(':'));
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const chunk = await reader.read().catch((e: unknown) => e);
      if (!isReadResult(chunk)) {
        controller.error(errorForTransport(subject, chunk, undefined));
        return;
      }
      if (!chunk.done) {
        hash.update(chunk.value);
        controller.enqueue(chunk.value);
        return;
      }
      const actual = `${algorithm}:${hash.digest('hex')}`;
      if (actual === digest) controller.close();
      else
        controller.error(
          digestMismatch(digest, actual, `${subject.what} from registry ${subject.registry}`),
        );
    },
    async cancel(reason) {
      await reader.cancel(reason);
    },
  });
}

function isReadResult(
  v: unknown,
): v is { done: true; value?: undefined } | { done: false; value: Uint8Array } {
  return typeof v === 'object' && v !== null && 'done' in v;
}
