// SPDX-License-Identifier: Apache-2.0
/** The lab control plane's controller manager and scheduler, when they run here (not hosted). */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort } from '../../platform/process/free-port.ts';
import { startProcess, type ManagedProcess } from '../../platform/process/managed-process.ts';
import { controllerManagerArgs, kubeconfig, schedulerArgs, type Files } from './kube-files.ts';

/** One controller manager and one scheduler here, on the admin identity. */
export async function controllers(
  bins: string,
  f: Files,
  api: { readonly server: string; readonly admin: string; readonly grace?: number | undefined },
  processes: ManagedProcess[],
): Promise<void> {
  const [kcmPort, schedPort] = await Promise.all([freePort(), freePort()]);
  const adminConfig = join(f.dir, 'controllers.kubeconfig');
  await writeFile(adminConfig, kubeconfig(api.server, f.caFile, 'admin', api.admin), {
    mode: 0o600,
  });
  const c = { kubeconfig: adminConfig, leaderElect: false, nodeMonitorGraceSeconds: api.grace };
  processes.push(
    startProcess(
      'kube-controller-manager',
      join(bins, 'kube-controller-manager'),
      controllerManagerArgs(f, { ...c, port: kcmPort }),
    ),
    startProcess(
      'kube-scheduler',
      join(bins, 'kube-scheduler'),
      schedulerArgs({ ...c, port: schedPort }),
    ),
  );
}
