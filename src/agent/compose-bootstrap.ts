// SPDX-License-Identifier: Apache-2.0
/**
 * The cluster bootstrap of a control-plane machine whose config asks for it
 * (`controlPlane.bootstrap`, docs/adr/0018 §3), for main.ts: as the PKI's admin.conf, its
 * progress on the agent's log, recorded on STATE. Loaded only on such a machine.
 */
import { join } from 'node:path';
import { BootstrapTokenFile } from '../platform/pki/kubernetes-layout.ts';
import type { MachineConfig } from '../protocol/machine-config.ts';
import { createKubeClusterBootstrap } from './adapters/cluster-bootstrap/index.ts';
import { createFsBootstrapRecord } from './adapters/cluster-bootstrap/record.ts';
import { startClusterBootstrap, type ClusterBootstrapLoop } from './machine/cluster-bootstrap.ts';
import { systemClock } from './ports/clock.system.ts';

export function clusterBootstrapOf(
  root: string,
  config: MachineConfig,
  log: (line: string) => void,
): ClusterBootstrapLoop | undefined {
  const cp = config.controlPlane;
  if (cp?.bootstrap === undefined || cp.pki === undefined) return undefined;
  return startClusterBootstrap({
    bootstrap: createKubeClusterBootstrap({
      kubeconfig: join(cp.pki.dir, 'admin.conf'),
      tokenFile: cp.bootstrap.tokenFile ?? join(cp.pki.dir, BootstrapTokenFile),
      ttlSeconds: cp.bootstrap.ttlHours * 3600,
    }),
    record: createFsBootstrapRecord(root),
    clock: systemClock,
    log,
  });
}
