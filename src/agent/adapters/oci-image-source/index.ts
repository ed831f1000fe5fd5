// SPDX-License-Identifier: Apache-2.0
/**
 * {@link ImageSource} on molt's OCI client (docs/adr/0004 §2, §3 PullImage); the pull itself is in
 * `pull.ts`. That module, and with it the HTTP client (undici), the tar parser and the signature
 * verifier, is loaded at the first pull, not when the agent starts: an idle agent never pulls, and
 * those libraries are about a third of its resident memory (benchmark P6).
 */
import type { Platform, RegistryClientOptions } from '../../../oci/index.ts';
import type { ImageSource } from '../../ports/image-source.ts';

export interface OciImageSourceOptions {
  /** Machine root (docs/adr/0004 §2). */
  readonly root: string;
  /** Client options for every registry an image names (`insecure` for loopback, credentials, CA, timeouts). */
  readonly registry?: Omit<RegistryClientOptions, 'registry'>;
  /** PEM public key: when set, only images with a signature that verifies with it are pulled. */
  readonly publicKeyPem?: string;
  /** @default 2 GiB */
  readonly maxBytes?: number;
  /** @default linux/amd64 */
  readonly platform?: Platform;
  readonly now?: () => Date;
}

export function createOciImageSource(o: OciImageSourceOptions): ImageSource {
  let puller: Promise<ImageSource> | undefined;
  return {
    async pull(image, slot, onProgress) {
      puller ??= import('./pull.ts').then(
        (m) => m.createPuller(o),
        (e: unknown) => {
          puller = undefined; // let the next pull try the import again
          throw e;
        },
      );
      return (await puller).pull(image, slot, onProgress);
    },
  };
}
