// SPDX-License-Identifier: Apache-2.0
/**
 * {@link ImageSource} on molt's OCI client (docs/adr/0004 §2, §3 PullImage); the pull itself is in
 * `pull.ts`. That module, and with it the HTTP client (undici), the tar parser and the signature
 * verifier, is loaded at the first pull, not when the agent starts: an idle agent never pulls, and
 * those libraries are about a third of its resident memory (benchmark P6).
 */
import type { ImageSource } from '../../ports/image-source.ts';
import type { OciImageSourceOptions } from './options.ts';

export type { OciImageSourceOptions } from './options.ts';

export function createOciImageSource(o: OciImageSourceOptions): ImageSource {
  let puller: Promise<ImageSource> | undefined;
  return {
    async pull(image, slot, options) {
      puller ??= import('./pull.ts').then(
        (m) => m.createPuller(o),
        (e: unknown) => {
          puller = undefined; // let the next pull try the import again
          throw e;
        },
      );
      return (await puller).pull(image, slot, options);
    },
  };
}
