// SPDX-License-Identifier: Apache-2.0
/**
 * The operator image's OCI config and manifest: linux/amd64, `molt operator` as the entrypoint
 * with the Deployment's arguments after it, run as `nonroot` from its home, and labels saying
 * which molt it is. The same layers and labels give the same digests: the creation time is the
 * Debian base's, not the build's.
 */
import { buildImage, type BuiltImage, type LayerInput } from '../../oci/index.ts';
import { MoltMain, NodePath, NonRoot } from './rootfs.ts';

/** Where the Deployment mounts the operator config (deploy/kubernetes/operator.yaml). */
export const DefaultConfigPath = '/etc/molt/config/operator.yaml';

export const OperatorEntrypoint = [NodePath, MoltMain, 'operator'] as const;

export interface OperatorImageInputs {
  readonly layers: {
    readonly debian: LayerInput;
    readonly node: LayerInput;
    readonly molt: LayerInput;
  };
  /** molt's version (its package.json). */
  readonly version: string;
  /** The source repository's URL, when known. */
  readonly source?: string;
  /** The commit molt was built from, when known. */
  readonly revision?: string;
  /** RFC 3339. */
  readonly created: string;
}

/** The config labels (OCI annotation keys, as `org.opencontainers.image.*`). */
export function operatorLabels(i: OperatorImageInputs): Record<string, string> {
  return {
    'org.opencontainers.image.title': 'molt-operator',
    'org.opencontainers.image.description':
      'The molt operator: rolls releases out to fleets of image-based Linux machines',
    'org.opencontainers.image.licenses': 'Apache-2.0',
    'org.opencontainers.image.version': i.version,
    'org.opencontainers.image.created': i.created,
    ...(i.source !== undefined && { 'org.opencontainers.image.source': i.source }),
    ...(i.revision !== undefined && { 'org.opencontainers.image.revision': i.revision }),
  };
}

export function operatorImage(i: OperatorImageInputs): BuiltImage {
  return buildImage({
    labels: operatorLabels(i),
    layers: [i.layers.debian, i.layers.node, i.layers.molt],
    run: {
      entrypoint: OperatorEntrypoint,
      cmd: ['--config', DefaultConfigPath],
      env: ['PATH=/usr/local/bin:/usr/bin:/bin', 'NODE_ENV=production', `HOME=/${NonRoot.home}`],
      workingDir: `/${NonRoot.home}`,
      user: `${NonRoot.uid}:${NonRoot.gid}`,
    },
    created: i.created,
  });
}
