// SPDX-License-Identifier: Apache-2.0
/**
 * The registry client of one pull. With `mirrors` (the machine config's `registry.mirrors`), a
 * reference whose registry host is a key is fetched from the mirror's address instead, as a
 * container runtime's mirror: the reference, the recorded `imageRef`, the signature lookup (same
 * repository, same digest) and the auth challenge (whatever the mirror answers) are otherwise
 * unchanged; the credentials, which belong to the registry the reference names, go to its mirror
 * as its stand-in and to no other registry. A VM reaches its host's loopback registry at 10.0.2.2 this way (docs/adr/0008 §7).
 */
import {
  clientOptionsFor,
  createRegistryClient,
  type OciRegistryClient,
} from '../../../oci/index.ts';
import type { OciImageSourceOptions } from './options.ts';

/** `host[:port]` to connect to for images named under `registry`. */
export function registryAddress(
  registry: string,
  mirrors: Readonly<Record<string, string>> = {},
): string {
  return Object.hasOwn(mirrors, registry) ? (mirrors[registry] ?? registry) : registry;
}

export function registryClientFor(o: OciImageSourceOptions, registry: string): OciRegistryClient {
  return createRegistryClient(
    clientOptionsFor(o.registry, registry, registryAddress(registry, o.mirrors)),
  );
}
