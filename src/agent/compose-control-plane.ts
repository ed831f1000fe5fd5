// SPDX-License-Identifier: Apache-2.0
/**
 * The control plane of a machine whose config has `controlPlane:` (docs/adr/0012 §3), for
 * compose.ts and compose-real.ts: lab machines run the components as processes, real machines as
 * systemd units; both pull bundles from the machine's registry with its signature key and size
 * bound, record specs under `state/kubernetes/`, and add one health check per component to the
 * runner's. Loaded only on control planes that render components.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { MachineConfig } from '../protocol/machine-config.ts';
import { createFsComponentRecords } from './adapters/fs-component-records/index.ts';
import { componentHealthChecks, httpsComponentProbe } from './adapters/health/component-probe.ts';
import { referencedRegistryOptions } from './adapters/oci-image-source/config-options.ts';
import { createOciKubeBundles } from './adapters/oci-kube-bundle/index.ts';
import { createProcessSupervisor } from './adapters/process-service/supervisor.ts';
import { createSystemdComponents } from './adapters/systemd-units/component-unit.ts';
import { createSystemctl, type Systemctl } from './adapters/systemd-units/systemctl.ts';
import { createControlPlane, type ControlPlane } from './machine/control-plane.ts';
import { systemClock } from './ports/clock.system.ts';
import type { ComponentSupervisor } from './ports/control-plane.ts';
import type { HealthCheck } from './ports/health-check.ts';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** How the components run: lab processes, or systemd units through this systemctl. */
export type Supervision =
  { readonly kind: 'lab' } | { readonly kind: 'systemd'; readonly systemctl: Systemctl };

function supervisorFor(root: string, s: Supervision): ComponentSupervisor {
  return s.kind === 'lab'
    ? createProcessSupervisor({ root })
    : createSystemdComponents({
        systemctl: s.systemctl,
        journalctl: createSystemctl('journalctl'),
      });
}

/** The machine's control plane, or undefined when its config renders no components. */
export async function controlPlaneOf(
  root: string,
  config: MachineConfig,
  supervision: Supervision,
  health: HealthCheck[],
): Promise<ControlPlane | undefined> {
  const cp = config.controlPlane;
  if (cp === undefined) return undefined;
  const publicKeyPem =
    config.publicKeyFile === undefined ? undefined : await readFile(config.publicKeyFile, 'utf8');
  const components = cp.components;
  health.push(
    ...componentHealthChecks(
      Object.entries(components).flatMap(([name, c]) =>
        c === undefined ? [] : [{ name, port: c.port }],
      ),
    ),
  );
  return createControlPlane({
    components,
    initial: { binaries: cp.binaries, version: cp.version },
    supervisor: supervisorFor(root, supervision),
    probe: httpsComponentProbe,
    bundles: createOciKubeBundles({
      root,
      registry: referencedRegistryOptions(config.registry),
      mirrors: config.registry.mirrors,
      maxBytes: cp.maxBundleBytes,
      ...(publicKeyPem !== undefined && { publicKeyPem }),
    }),
    records: createFsComponentRecords(root),
    clock: systemClock,
    sha256,
    healthTimeoutMs: cp.healthTimeoutSeconds * 1000,
  });
}
