// SPDX-License-Identifier: Apache-2.0
/**
 * Small Kubernetes bundles for tests: "binaries" that are scripts, pushed in the bundle format
 * (`core/kubernetes/bundle.ts`) as `molt dev publish-kubernetes` pushes real ones.
 */
import { bundleManifest, KubeBundleFormat, type BundleBinary } from '../core/kubernetes/bundle.ts';
import { MediaType, type RegistryClient } from '../oci/index.ts';

const encoder = new TextEncoder();

/** A script that prints `Kubernetes <version>` for `--version`, like the real binaries. */
export function fakeBinary(name: string, version: string): Uint8Array {
  return encoder.encode(`#!/bin/sh\n# ${name}\necho "Kubernetes ${version}"\n`);
}

/**
 * Push a bundle of `version` with the three control-plane binaries (or `binaries`), tagged with
 * the version; resolves with its manifest digest.
 */
export async function pushKubeBundle(
  client: RegistryClient,
  repository: string,
  version: string,
  binaries: Readonly<Record<string, Uint8Array>> = {
    'kube-apiserver': fakeBinary('kube-apiserver', version),
    'kube-controller-manager': fakeBinary('kube-controller-manager', version),
    'kube-scheduler': fakeBinary('kube-scheduler', version),
  },
): Promise<string> {
  const layers: BundleBinary[] = [];
  for (const [name, bytes] of Object.entries(binaries)) {
    const d = await client.pushBlob(repository, bytes, KubeBundleFormat.binaryMediaType);
    layers.push({ name: name as BundleBinary['name'], digest: d.digest, size: d.size });
  }
  await client.pushBlob(repository, encoder.encode('{}'), MediaType.OciEmpty);
  const manifest = encoder.encode(JSON.stringify(bundleManifest(version, layers)));
  return client.pushManifest(repository, version, manifest, MediaType.OciManifest);
}
