// SPDX-License-Identifier: Apache-2.0
/** The machine config's `registry` section as the options of every registry client the agent makes. */
import type { ReferencedRegistryOptions } from '../../../oci/index.ts';
import type { MachineConfig } from '../../../protocol/machine-config.ts';

/** `insecure`, `tokenRealms`, and the credentials scoped to the one registry they belong to. */
export function referencedRegistryOptions(
  registry: MachineConfig['registry'],
): ReferencedRegistryOptions {
  const { host, username, password, insecure, tokenRealms } = registry;
  return {
    insecure,
    tokenRealms,
    ...(host !== undefined &&
      username !== undefined &&
      password !== undefined && { credentials: { registry: host, username, password } }),
  };
}
