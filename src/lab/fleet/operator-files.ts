// SPDX-License-Identifier: Apache-2.0
/**
 * The files `molt operator --config` reads for a lab fleet: the fleet file (its pools, every lab
 * machine with its agent's endpoint) and the operator config (the fleet's registry, PKI and etcd
 * store), with whatever else the caller adds (listeners, Kubernetes, faster periods). Shared by
 * `molt lab` and the tests that run the real operator process.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { FleetFileInput } from '../../protocol/fleet-schema.ts';
import type { OperatorConfigInput } from '../../protocol/operator-config.ts';
import { repository, type LabFleet } from './fleet.ts';

export interface OperatorFiles {
  /** The fleet file's `pools`. */
  readonly pools: FleetFileInput['pools'];
  /** Fleet-wide policies. @default [{controlPlaneFirst: true}] */
  readonly fleetPolicies?: NonNullable<FleetFileInput['fleet']>['policies'];
  /** More of the operator config (merged over the defaults). */
  readonly config?: Partial<OperatorConfigInput>;
  /** The fleet file's `clusters` (settings of an etcd / Kubernetes cluster). @default none */
  readonly clusters?: FleetFileInput['clusters'];
  /** Each machine's labels in the fleet file (a zone, …). @default none */
  readonly labels?: (machine: string) => Readonly<Record<string, string>>;
}

/** Write `fleet.yaml` and `operator.yaml` into the fleet's directory; resolves with the config's path. */
export async function writeOperatorFiles(
  fleet: Pick<LabFleet, 'dir' | 'machines' | 'pki' | 'storeEndpoints'> & {
    readonly registry: { readonly host: string };
  },
  o: OperatorFiles,
): Promise<string> {
  const fleetFile = join(fleet.dir, 'fleet.yaml');
  const fleetInput: FleetFileInput = {
    fleet: { policies: o.fleetPolicies ?? [{ controlPlaneFirst: true }] },
    pools: o.pools,
    ...(o.clusters !== undefined && { clusters: o.clusters }),
    machines: fleet.machines.map((m) => ({ ...m, labels: { ...o.labels?.(m.id) } })),
  };
  await writeFile(fleetFile, stringify(fleetInput));
  const file = join(fleet.dir, 'operator.yaml');
  const config: OperatorConfigInput = {
    registry: fleet.registry.host,
    repository,
    insecure: true,
    fleet: fleetFile,
    pki: {
      ca: join(fleet.pki.dir, 'ca.pem'),
      cert: join(fleet.pki.dir, 'operator.pem'),
      key: join(fleet.pki.dir, 'operator.key'),
    },
    store: { etcd: [...fleet.storeEndpoints] },
    interval: '1s',
    discoverEvery: '1s',
    ...o.config,
  };
  await writeFile(file, stringify(config));
  return file;
}
