// SPDX-License-Identifier: Apache-2.0
/**
 * Inflating a gzip tar layer as a stream, for `tar-layer.ts`. tar's own `Parser` would inflate it
 * too, but synchronously (minizlib): one network chunk of a gzip bomb (1 MiB of deflated zeros) then
 * becomes ~1 GiB in memory before a single byte is counted — such a bomb once left the agent
 * at ~404 MB. Node's zlib stream inflates in bounded chunks, each counted (and refused past the cap)
 * before the next, and its backpressure pauses the download while the disk catches up.
 */
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { createGunzip, type Gunzip } from 'node:zlib';
import { ErrorCode, MoltError } from '../../../core/errors.ts';

/** Output chunk size: small enough to bound memory, large enough to keep thread-pool round trips few. */
const chunkSize = 256 * 1024;

export interface InflaterOptions {
  readonly layerDigest: string;
  /** Takes each inflated chunk; returns the error that must stop the layer, if any. */
  readonly onData: (chunk: Buffer) => Error | undefined;
}

/** A gzip stream fed chunk by chunk, whose output goes to `onData` as it is produced. */
export class Inflater {
  private failure: Error | undefined = undefined;
  private readonly gunzip: Gunzip;
  constructor(o: InflaterOptions) {
    this.gunzip = createGunzip({ chunkSize });
    this.gunzip.on('data', (chunk: Buffer) => {
      if (this.failure !== undefined) return;
      const stop = o.onData(chunk);
      if (stop !== undefined) this.fail(stop);
    });
    this.gunzip.on('error', (e: unknown) => {
      this.failure ??= new MoltError(
        ErrorCode.ImageInvalid,
        `tar layer ${o.layerDigest} is not valid gzip`,
        { cause: e },
      );
    });
  }

  /** Feed compressed bytes; a promise means "wait before the next chunk" (backpressure). */
  write(chunk: Buffer): Promise<void> | undefined {
    if (this.failure !== undefined) throw this.failure;
    if (this.gunzip.write(chunk)) return undefined;
    return once(this.gunzip, 'drain').then(
      () => {
        if (this.failure !== undefined) throw this.failure;
      },
      () => {
        throw this.failure ?? new Error('gzip stream failed');
      },
    );
  }

  /** All compressed bytes were fed: wait until every inflated byte reached `onData`. */
  async end(): Promise<void> {
    if (this.failure === undefined) {
      this.gunzip.end();
      await finished(this.gunzip).catch(() => undefined);
    }
    if (this.failure !== undefined) throw this.failure;
  }

  /** Stop inflating (the layer failed elsewhere). */
  destroy(): void {
    this.failure ??= new Error('inflating stopped');
    this.gunzip.destroy();
  }

  private fail(e: Error): void {
    this.failure ??= e;
    this.gunzip.destroy(e);
  }
}
