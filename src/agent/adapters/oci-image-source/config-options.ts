// SPDX-License-Identifier: Apache-2.0
/** The machine config's `registry` section as the options of every registry client the agent makes. */
import type { ReferencedRegistryOptions } from '../../../oci/index.ts';
import type { MachineConfig } from '../../../protocol/machine-config.ts';

/**
 * Why the config's registry credentials go to no registry, or undefined when they go to theirs
 * (or there are none). A config written before `registry.host` existed still loads: its agent
 * starts and stays manageable, and only pulls that need the credentials fail, saying this.
 */
export function withheldCredentials(registry: MachineConfig['registry']): string | undefined {
  const { host, username, password } = registry;
  if (username === undefined && password === undefined) return undefined;
  if (username === undefined || password === undefined) {
    const [given, missing] =
      username === undefined ? ['password', 'username'] : ['username', 'password'];
    return `registry.${given} is set without registry.${missing}: set both, and registry.host, in the machine config`;
  }
  if (host === undefined)
    return 'set registry.host in the machine config to the host[:port] release references name: registry.username and registry.password go to that registry only, and to none without it';
  return undefined;
}

/** `insecure`, `tokenRealms`, and the credentials scoped to the one registry they belong to. */
export function referencedRegistryOptions(
  registry: MachineConfig['registry'],
): ReferencedRegistryOptions {
  const { host, username, password, insecure, tokenRealms } = registry;
  const withheld = withheldCredentials(registry);
  return {
    insecure,
    tokenRealms,
    ...(host !== undefined &&
      username !== undefined &&
      password !== undefined && { credentials: { registry: host, username, password } }),
    ...(withheld !== undefined && { withheldCredentials: withheld }),
  };
}
