// SPDX-License-Identifier: Apache-2.0
/**
 * Pieces `main.ts` composes the API from: the FleetLock groups (one per pool, slots and windows
 * from the pool's policies, scoped to the pool's machines; slot TTLs from `fleetLock.ttl` and
 * `fleetLock.groups`), the API's server certificate read from the config's `pki.serverCert` /
 * `pki.serverKey`, and the dashboard's single sign-on secret (both relative to the config file).
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { FleetSnapshot } from '../../core/rollout/types.ts';
import type { DashboardOidc } from '../../protocol/dashboard-config.ts';
import type { OperatorConfig } from '../../protocol/operator-config.ts';
import { readPem } from '../../platform/pki/read-pem.ts';
import type { SsoSettings } from './dashboard-sso.ts';
import { fleetLockGroup, type FleetLockGroup } from './fleetlock-groups.ts';

/**
 * FleetLock groups = pools; a group molt does not serve is undefined (`unknown_group`). Fleet-wide
 * windows apply to every group; fleet-wide concurrency does not: it counts the whole fleet, which
 * one group's semaphore cannot see.
 */
export function fleetLockGroups(
  fleet: FleetSnapshot,
  config?: OperatorConfig['fleetLock'],
): (group: string) => FleetLockGroup | undefined {
  const groups = new Map(
    fleet.pools.map((p) => [
      p.name,
      fleetLockGroup(
        [...p.policies, ...fleet.fleetPolicies.filter((x) => x.kind === 'window')],
        fleet.machines.filter((m) => m.pool === p.name).length,
        config?.groups[p.name]?.ttl ?? config?.ttl,
      ),
    ]),
  );
  return (group) => groups.get(group);
}

const pem = (path: string, what: string): Promise<string> =>
  readPem(path, what, 'issue one with `molt pki issue --role node --name <operator> --san <host>`');

/** The API's certificate and key (the config schema requires both with `listen`). */
export async function readServerTls(
  configPath: string,
  config: OperatorConfig,
): Promise<{ cert: string; key: string }> {
  const { serverCert, serverKey } = config.pki;
  if (serverCert === undefined || serverKey === undefined)
    throw new MoltError(
      ErrorCode.ConfigInvalid,
      `${configPath}: listen needs pki.serverCert and pki.serverKey`,
    );
  const at = (p: string): string => resolve(dirname(configPath), p);
  return {
    cert: await pem(at(serverCert), 'the API certificate'),
    key: await pem(at(serverKey), 'the API key'),
  };
}

/**
 * `dashboard.oidc` with its client secret read from `clientSecretFile` (relative to the config
 * file): a missing or empty file stops the operator at start, naming it.
 */
export async function ssoSettings(configPath: string, o: DashboardOidc): Promise<SsoSettings> {
  if (o.clientSecretFile === undefined) return o;
  const file = resolve(dirname(configPath), o.clientSecretFile);
  const secret = (
    await readFile(file, 'utf8').catch((e: unknown) => {
      throw new MoltError(
        ErrorCode.ConfigInvalid,
        `${configPath}: dashboard.oidc.clientSecretFile ${file} cannot be read: ${(e as Error).message}`,
      );
    })
  ).trim();
  if (secret === '')
    throw new MoltError(
      ErrorCode.ConfigInvalid,
      `${configPath}: dashboard.oidc.clientSecretFile ${file} is empty`,
    );
  return { ...o, clientSecret: secret };
}
