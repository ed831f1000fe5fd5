// SPDX-License-Identifier: Apache-2.0
/**
 * Reading `molt operator --config FILE` (format: protocol/operator-config.ts) and the fleet file it
 * names. Every problem is a `MoltError` naming the file: `MOLT_CONFIG_INVALID` for the config,
 * the fleet file's own codes (with line:column) for the fleet, `MOLT_PKI_INVALID` for certificates,
 * `MOLT_SECRET_EXPOSED` for a webhook secret others can read (`config-notify.ts`).
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parse } from 'yaml';
import { ErrorCode, MoltError } from '../core/errors.ts';
import type { FleetSnapshot } from '../core/rollout/types.ts';
import { parseFleet } from '../protocol/fleet.ts';
import { OperatorConfig } from '../protocol/operator-config.ts';
import {
  checkNotificationEvents,
  readNotificationSecrets,
  type NotificationSecrets,
} from './config-notify.ts';

export interface LoadedConfig {
  readonly config: OperatorConfig;
  readonly fleet: FleetSnapshot;
  readonly fleetFile: string;
  readonly pki: { readonly ca: string; readonly cert: string; readonly key: string };
  readonly publicKeyPem?: string;
  /** The shared secret of each notification sink with a `secretFile`, by sink name. */
  readonly notificationSecrets: NotificationSecrets;
}

async function text(path: string, what: string, code: ErrorCode, hint?: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    throw new MoltError(
      code,
      `cannot read ${what} ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`,
      { cause: e, ...(hint !== undefined && { hint }) },
    );
  }
}

/**
 * Where the operator's PKI files come from: in a cluster a Secret mounted as files, which a
 * missing Secret (an optional volume) leaves absent; elsewhere `molt pki`.
 */
const pkiHint =
  'in a cluster: create the Secret molt-operator-pki as deploy/kubernetes/operator.yaml shows (its keys ca.pem, operator.pem, operator.key, server.pem, server.key); elsewhere: `molt pki init` and `molt pki issue`';

function parseConfig(source: string, path: string): OperatorConfig {
  let raw: unknown;
  try {
    raw = parse(source);
  } catch (e) {
    throw new MoltError(
      ErrorCode.ConfigInvalid,
      `${path}: not YAML: ${(e as Error).message.split('\n')[0] ?? ''}`,
    );
  }
  const parsed = OperatorConfig.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`);
  throw new MoltError(ErrorCode.ConfigInvalid, `${path}: ${issues.join('; ')}`, {
    hint: 'see the operator config format in docs/adr/0005-operator.md or protocol/operator-config.ts',
  });
}

/** A `selfRegistration` rule naming a pool the fleet file does not define is a config error. */
function checkSelfRegistrationPools(
  config: OperatorConfig,
  fleet: FleetSnapshot,
  path: string,
): void {
  const pools = new Set(fleet.pools.map((p) => p.name));
  config.selfRegistration.forEach((rule, i) => {
    if (!pools.has(rule.pool))
      throw new MoltError(
        ErrorCode.ConfigInvalid,
        `${path}: selfRegistration.${String(i)}.pool: the fleet file has no pool ${rule.pool}`,
        { hint: `pools: ${[...pools].join(', ')}` },
      );
  });
}

/** A pool that names Cluster API as its provider needs the management cluster: `capi.kubeconfig`. */
function checkCapiProviders(config: OperatorConfig, fleet: FleetSnapshot, path: string): void {
  if (config.capi?.kubeconfig !== undefined) return;
  const pool = fleet.pools.find((p) => p.provider !== undefined && 'capi' in p.provider);
  if (pool !== undefined)
    throw new MoltError(
      ErrorCode.ConfigInvalid,
      `${path}: pool ${pool.name} names Cluster API as its provider (provider: {capi: {}}), but the config has no capi.kubeconfig`,
      {
        hint: 'set capi.kubeconfig to the management cluster, where molt asks Cluster API to replace Machines',
      },
    );
}

export async function loadOperatorConfig(path: string): Promise<LoadedConfig> {
  const config = parseConfig(
    await text(path, 'the operator config', ErrorCode.ConfigInvalid),
    path,
  );
  const at = (p: string): string => resolve(dirname(path), p);
  const fleetFile = at(config.fleet);
  const declared = config.kubernetes?.declared === true;
  const fleet = parseFleet(await text(fleetFile, 'the fleet file', ErrorCode.FleetInvalid), {
    source: fleetFile,
    poolsDeclaredElsewhere: declared,
  });
  // Declared pools come and go: a registration naming one that does not exist is refused then.
  if (!declared) checkSelfRegistrationPools(config, fleet, path);
  checkNotificationEvents(config, path);
  checkCapiProviders(config, fleet, path);
  const pki = {
    ca: await text(at(config.pki.ca), 'the fleet CA', ErrorCode.PkiInvalid, pkiHint),
    cert: await text(
      at(config.pki.cert),
      'the operator certificate',
      ErrorCode.PkiInvalid,
      pkiHint,
    ),
    key: await text(at(config.pki.key), 'the operator key', ErrorCode.PkiInvalid, pkiHint),
  };
  const publicKeyPem =
    config.publicKey === undefined
      ? undefined
      : await text(at(config.publicKey), 'the release public key', ErrorCode.PublicKeyInvalid);
  const notificationSecrets = await readNotificationSecrets(config, path);
  return {
    ...{ config, fleet, fleetFile, pki, notificationSecrets },
    ...(publicKeyPem !== undefined && { publicKeyPem }),
  };
}
