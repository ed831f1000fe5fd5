// SPDX-License-Identifier: Apache-2.0
/** How the agent's image source reaches its registry and what it accepts. */
import type { Platform, ReferencedRegistryOptions } from '../../../oci/index.ts';

export interface OciImageSourceOptions {
  /** Machine root (docs/adr/0004 §2). */
  readonly root: string;
  /** Client options for every registry an image names (`insecure` for loopback, CA, timeouts; credentials for their own registry only). */
  readonly registry?: ReferencedRegistryOptions;
  /**
   * Registry hosts reached at another address (`host[:port]` → `host[:port]`), keyed by the host
   * as image references name it. @default {}
   */
  readonly mirrors?: Readonly<Record<string, string>>;
  /** PEM public key: when set, only images with a signature that verifies with it are pulled. */
  readonly publicKeyPem?: string;
  /** @default 2 GiB */
  readonly maxBytes?: number;
  /** @default linux/amd64 */
  readonly platform?: Platform;
  readonly now?: () => Date;
}
