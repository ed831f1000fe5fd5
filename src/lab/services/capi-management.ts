// SPDX-License-Identifier: Apache-2.0
/**
 * A real Cluster API management plane against a control plane from
 * {@link startKubeControlPlane}: the CAPI CRDs applied server-side (provider CRDs with the contract
 * labels), then the core, kubeadm control plane, kubeadm bootstrap and CAPD managers (CAPD for its
 * in-memory backend: no Docker), built once by `scripts/ensure-capi-bins.sh`. Each manager serves
 * its webhooks on its own port with a self-signed certificate; the webhooks are not registered with
 * the API server (no defaulting or validation: write complete v1beta2 objects). Runtime SDK and
 * in-place updates are on; the managers present a client certificate to runtime extensions, signed
 * by {@link CapiManagement.pki}'s CA. Every process is stopped by the PID this harness started.
 */
import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { fetch } from 'undici';
import { runBuildScript } from '../../platform/kube/binaries.ts';
import { freePort } from '../../platform/process/free-port.ts';
import {
  eventually,
  startProcess,
  tempDir,
  type ManagedProcess,
} from '../../platform/process/managed-process.ts';
import {
  CapiManagers,
  ContractLabels,
  CrdDirs,
  LabelledCrdDirs,
  managerArgs,
  managerEnv,
  writeCapiPki,
  type CapiManagerName,
  type CapiPki,
  type ManagerPorts,
} from './capi-files.ts';
import type { KubeControlPlane } from './kube-control-plane.ts';

export type { CapiManagerName, CapiPki } from './capi-files.ts';

const run = promisify(execFile);

export interface CapiManagementOptions {
  /** How long to wait for the CRDs and for every manager's /readyz. @default 120000 */
  readonly startTimeoutMs?: number;
  /** Progress of a first build of the binaries (about 5 min on 2 cores). */
  readonly onProgress?: (line: string) => void;
}

export interface CapiManager {
  readonly name: CapiManagerName;
  readonly process: ManagedProcess;
  readonly ports: ManagerPorts;
  /** `http://127.0.0.1:<health>/readyz`. */
  readonly readyz: string;
}

export interface CapiManagement {
  /** The Cluster API release (the cache directory's name, e.g. v1.14.2). */
  readonly version: string;
  /** The binaries and `crds/<provider>/` (scripts/ensure-capi-bins.sh's directory). */
  readonly bins: string;
  /** Scratch: certificates and each manager's log (`<name>.log`); removed at stop. */
  readonly dir: string;
  /** The kubeconfig the managers use (the control plane's admin, system:masters). */
  readonly kubeconfig: string;
  readonly managers: readonly CapiManager[];
  /** The CA that signed the webhook and runtime-extension client certificates. */
  readonly pki: CapiPki;
  manager(name: CapiManagerName): CapiManager;
  /** Stops the managers (not the Kubernetes control plane, which the caller owns). */
  stop(): Promise<void>;
}

/** Build (or find cached) the Cluster API binaries and CRDs; resolves with their directory. */
export function capiBinaries(onProgress?: (line: string) => void): Promise<string> {
  return runBuildScript('ensure-capi-bins.sh', [], onProgress);
}

/** Start the management plane on `kube`; resolves once every manager answers /readyz. */
export async function startCapiManagement(
  kube: KubeControlPlane,
  o: CapiManagementOptions = {},
): Promise<CapiManagement> {
  const timeoutMs = o.startTimeoutMs ?? 120_000;
  const bins = await capiBinaries(o.onProgress);
  const scratch = await tempDir('capi');
  const managers: CapiManager[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(managers.map((m) => m.process.stop(5_000)));
    await scratch.remove();
  };
  try {
    const kubeconfig = kube.admin.kubeconfig;
    await installCapiCrds(join(kube.bins, 'kubectl'), kubeconfig, join(bins, 'crds'));
    const pki = await writeCapiPki(scratch.path);
    for (const name of CapiManagers)
      managers.push(await startManager(name, { bins, dir: scratch.path, kubeconfig, pki }));
    await Promise.all(managers.map((m) => ready(m, timeoutMs)));
    await waitServed(join(kube.bins, 'kubectl'), kubeconfig, join(bins, 'crds'), timeoutMs);
    return {
      version: basename(bins),
      bins,
      dir: scratch.path,
      kubeconfig,
      managers,
      pki,
      manager: (name) => {
        const m = managers.find((x) => x.name === name);
        if (m === undefined) throw new Error(`no Cluster API manager ${name}`);
        return m;
      },
      stop,
    };
  } catch (e) {
    const tail = managers
      .map((m) => `--- ${m.name}\n${m.process.output().slice(-2000)}`)
      .join('\n');
    await stop();
    throw new Error(`the Cluster API management plane did not start: ${String(e)}\n${tail}`, {
      cause: e,
    });
  }
}

/** All CAPI CRDs, server-side (they are too big for client-side apply), labelled, Established. */
export async function installCapiCrds(
  kubectl: string,
  kubeconfig: string,
  crds: string,
): Promise<void> {
  const k = ['--kubeconfig', kubeconfig];
  const files = CrdDirs.flatMap((d) => ['-f', join(crds, d)]);
  await run(kubectl, [...k, 'apply', '--server-side', '--force-conflicts', ...files]);
  const labelled = LabelledCrdDirs.flatMap((d) => ['-f', join(crds, d)]);
  await run(kubectl, [...k, 'label', '--overwrite', ...labelled, ...ContractLabels]);
  await run(kubectl, [...k, 'wait', '--for=condition=Established', '--timeout=60s', ...files]);
}

/**
 * Wait until every CAPI resource lists: a new CRD's watch cache answers 429 "storage is
 * (re)initializing" for a while after Established, longer on a loaded machine.
 */
export async function waitServed(
  kubectl: string,
  kubeconfig: string,
  crds: string,
  timeoutMs: number,
): Promise<void> {
  const resources: string[] = [];
  for (const d of CrdDirs)
    for (const f of await readdir(join(crds, d))) {
      // `<group>_<plural>.yaml`, as controller-gen names them.
      const m = /^(.+)_(.+)\.yaml$/.exec(f);
      if (m !== null) resources.push(`${m[2] ?? ''}.${m[1] ?? ''}`);
    }
  await eventually(
    () =>
      run(kubectl, ['--kubeconfig', kubeconfig, 'get', resources.join(','), '-A', '-o', 'name']),
    { timeoutMs, intervalMs: 500 },
  );
}

interface Launch {
  readonly bins: string;
  readonly dir: string;
  readonly kubeconfig: string;
  readonly pki: CapiPki;
}

async function startManager(name: CapiManagerName, l: Launch): Promise<CapiManager> {
  const [webhook, health, diagnostics] = await Promise.all([freePort(), freePort(), freePort()]);
  const ports = { webhook, health, diagnostics };
  const webhookCertDir = l.pki.webhookCertDirs.get(name) ?? join(l.dir, 'pki', name);
  const args = managerArgs(name, {
    kubeconfig: l.kubeconfig,
    webhookCertDir,
    ports,
    extensionClient: l.pki.extensionClient,
  });
  const proc = startProcess(name, join(l.bins, name), args, {
    env: managerEnv(name, process.env),
    logFile: join(l.dir, `${name}.log`),
  });
  return { name, process: proc, ports, readyz: `http://127.0.0.1:${String(health)}/readyz` };
}

/** Wait until the manager's /readyz answers 200, failing at once if it exits. */
async function ready(m: CapiManager, timeoutMs: number): Promise<void> {
  const up = eventually(
    async () => {
      const res = await fetch(m.readyz);
      if (res.status !== 200) throw new Error(`${m.name} /readyz: ${String(res.status)}`);
    },
    { timeoutMs, intervalMs: 250 },
  );
  let settled = false;
  const died = m.process.exited.then((code) => {
    if (!settled) throw new Error(`${m.name} exited (${String(code)}) before it was ready`);
  });
  try {
    await Promise.race([up, died]);
  } finally {
    settled = true;
  }
}
