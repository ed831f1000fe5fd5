// SPDX-License-Identifier: Apache-2.0
import type { Dispatcher } from 'undici';
import type { MoltError } from '../protocol/index.ts';
import { digestMismatch, hasherFor } from './digest.ts';
import { errorForTransport, type RequestSubject } from './http-errors.ts';

/** A response body: undici's Node `Readable` (read it, or {@link discard} it, or the connection is held). */
export type Body = Dispatcher.ResponseData['body'];

/** The part of a response the body readers need. */
export interface BodySource {
  readonly headers: { get(name: string): string | null };
  readonly body: Body;
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
    abandon(res.body);
    throw tooLarge(declared);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    total += chunk.byteLength;
    if (total > limit) {
      abandon(res.body);
      throw tooLarge(total);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, total);
}

/** Read at most `limit` bytes of an error body as text; never throws (the status already says enough). */
export async function readErrorText(res: BodySource, limit = 64 * 1024): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      total += chunk.byteLength;
      if (total >= limit) break; // leaving the loop destroys the rest of the body
    }
  } catch {
    // a broken error body: the status code alone will have to do
  }
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}

/**
 * Stop reading a body and free its connection. The 'error' undici then emits (an abort) is
 * expected, and must not become an uncaught exception when nobody else listens.
 */
export function abandon(body: Body): void {
  body.on('error', ignore);
  body.destroy();
}

function ignore(): void {
  // an abandoned body's abort error: nothing to do
}

/** Drop a body we do not need: a small rest is read so its connection goes back to the pool. */
export async function discard(res: BodySource): Promise<void> {
  await res.body.dump().catch(() => undefined);
}

/** Where {@link pumpVerified} delivers a blob's bytes. */
export interface BlobSink {
  /**
   * Take the next chunk (the sink may keep it). Returning a promise pauses the body until it
   * settles (backpressure); throwing or rejecting stops the transfer with that error.
   */
  write(chunk: Buffer): Promise<void> | undefined;
}

/**
 * Deliver `body` to `sink` while hashing it, without a promise per chunk; resolve with the byte
 * count once the bytes hash to `digest`, else reject with MOLT_DIGEST_MISMATCH — after the sink
 * has seen every byte, so the sink must not trust them before this settles. Transport failures
 * mid-stream become MOLT_REGISTRY_UNREACHABLE or MOLT_REGISTRY_TIMEOUT. An aborted `subject.signal`
 * destroys the body and rejects with the signal's reason, even while the registry sends nothing.
 */
export function pumpVerified(
  body: Body,
  digest: string,
  subject: RequestSubject & { readonly signal?: AbortSignal | undefined },
  sink: BlobSink,
): Promise<number> {
  const signal = subject.signal;
  const hash = hasherFor(digest);
  const algorithm = digest.slice(0, digest.indexOf(':'));
  let total = 0;
  return new Promise<number>((resolve, reject) => {
    let failure: Error | undefined = undefined;
    const fail = (e: unknown): void => {
      failure ??= e instanceof Error ? e : new Error(String(e));
      body.destroy();
    };
    const resume = (): void => {
      if (failure === undefined) body.resume();
    };
    const aborted = (): void => {
      fail(signal?.reason);
    };
    if (signal?.aborted === true) aborted();
    signal?.addEventListener('abort', aborted, { once: true });
    const settled = (): void => {
      signal?.removeEventListener('abort', aborted);
    };
    body.once('close', settled);
    body.on('data', (chunk: Buffer) => {
      if (failure !== undefined) return;
      hash.update(chunk);
      total += chunk.byteLength;
      try {
        const wait = sink.write(chunk);
        if (wait === undefined) return;
        body.pause();
        wait.then(resume, fail);
      } catch (e) {
        fail(e);
      }
    });
    body.on('error', (e: unknown) => {
      reject(failure ?? errorForTransport(subject, e, undefined));
    });
    body.on('end', () => {
      if (failure !== undefined) {
        reject(failure);
        return;
      }
      const actual = `${algorithm}:${hash.digest('hex')}`;
      if (actual === digest) resolve(total);
      else
        reject(digestMismatch(digest, actual, `${subject.what} from registry ${subject.registry}`));
    });
  });
}

/**
 * `body` as a web stream that hashes as it passes and, at its end, errors with
 * MOLT_DIGEST_MISMATCH unless the bytes hash to `digest` (see {@link pumpVerified}).
 */
export function verifyingStream(
  body: Body,
  digest: string,
  subject: RequestSubject,
): ReadableStream<Uint8Array> {
  let wake: (() => void) | undefined;
  let cancelled = false;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const sink: BlobSink = {
          write(chunk) {
            controller.enqueue(chunk);
            if ((controller.desiredSize ?? 1) > 0) return undefined;
            return new Promise<void>((resolve) => {
              wake = resolve;
            });
          },
        };
        pumpVerified(body, digest, subject, sink).then(
          () => {
            if (!cancelled) controller.close();
          },
          (e: unknown) => {
            if (!cancelled) controller.error(e);
          },
        );
      },
      pull() {
        wake?.();
        wake = undefined;
      },
      cancel() {
        cancelled = true;
        abandon(body);
      },
    },
    { highWaterMark: 16 },
  );
}
