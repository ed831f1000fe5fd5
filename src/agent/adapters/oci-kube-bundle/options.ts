// SPDX-License-Identifier: Apache-2.0
/** How the agent's bundle store reaches its registry and what it accepts. */
import type { ReferencedRegistryOptions } from '../../../oci/index.ts';

export interface OciKubeBundlesOptions {
  /** Machine root: bundles go to `<root>/state/kubernetes/`. */
  readonly root: string;
  readonly registry?: ReferencedRegistryOptions;
  /** Registry hosts reached at another address (the machine config's `registry.mirrors`). */
  readonly mirrors?: Readonly<Record<string, string>>;
  /** PEM public key: when set, only bundles with a signature that verifies with it are staged. */
  readonly publicKeyPem?: string;
  /** Largest bundle accepted (the sum of its binaries). */
  readonly maxBytes: number;
}
