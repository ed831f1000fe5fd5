// SPDX-License-Identifier: Apache-2.0
/**
 * A control-plane machine's cluster PKI (docs/adr/0018 §3). `molt install --kube-pki DIR` takes the
 * directory `molt pki kubernetes` wrote; before the disk is touched it is checked whole and this
 * cluster's (the config's `controlPlane.pki.cluster`: the CAs' subjects name it), so a control
 * plane never starts on another cluster's CA or an expired certificate. The stage then lays the
 * files onto STATE at `controlPlane.pki.dir`: keys, kubeconfigs and the bootstrap token (when the
 * PKI has one) 0600, in 0700 directories.
 */
import { readFile } from 'node:fs/promises';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { bootstrapTokenIn, checkKubernetesPki } from '../../platform/pki/kubernetes-check.ts';
import {
  BootstrapTokenFile,
  KubernetesPkiFiles,
  privateFiles,
  type KubernetesPkiFile,
} from '../../platform/pki/kubernetes-layout.ts';
import type { MachineConfig } from '../../protocol/machine-config.ts';

/** The PKI's files as read here, for the directory on the machine. */
export interface ClusterPki {
  /** Where they go on the machine (under /molt/state/). */
  readonly dir: string;
  /** Each file by its path relative to `dir`, and whether it holds a private key. */
  readonly files: readonly {
    readonly path: string;
    readonly content: Buffer;
    readonly private: boolean;
  }[];
}

/**
 * Read and check `--kube-pki DIR` for `config`, or nothing when neither names a cluster PKI.
 * @throws MoltError `MOLT_BAD_FLAG` (DIR with no `controlPlane.pki` to put it) or
 *   `MOLT_KUBE_PKI_INVALID` (no DIR for a config that wants one, or a PKI that fails the check)
 */
export async function readClusterPki(
  config: MachineConfig,
  dir: string | undefined,
): Promise<ClusterPki | undefined> {
  const wanted = config.controlPlane?.pki;
  if (wanted === undefined) {
    if (dir === undefined) return undefined;
    throw new MoltError(
      ErrorCode.BadFlag,
      `--kube-pki ${dir} has nowhere to go: the machine config names no controlPlane.pki`,
      {
        hint: 'set controlPlane.pki.cluster to the cluster the PKI is for (a control-plane machine)',
      },
    );
  }
  if (dir === undefined)
    throw new MoltError(
      ErrorCode.KubePkiInvalid,
      `the machine config's controlPlane.pki is for cluster ${wanted.cluster}, and no --kube-pki DIR gives its PKI`,
      { hint: `molt pki kubernetes --cluster ${wanted.cluster} --out DIR writes one` },
    );
  const paths = await checkKubernetesPki(dir, { cluster: wanted.cluster });
  const roles = Object.keys(KubernetesPkiFiles) as KubernetesPkiFile[];
  const files = await Promise.all(
    roles.map(async (role) => ({
      path: KubernetesPkiFiles[role],
      content: await readFile(paths[role]),
      private: privateFiles.includes(role),
    })),
  );
  const token = await bootstrapTokenIn(dir);
  const bootstrap = config.controlPlane?.bootstrap;
  if (bootstrap !== undefined && bootstrap.tokenFile === undefined && token === undefined)
    throw new MoltError(
      ErrorCode.KubePkiInvalid,
      `controlPlane.bootstrap registers the PKI's bootstrap token, and ${dir} has no ${BootstrapTokenFile}`,
      {
        hint: 'write one (molt pki kubernetes makes it), or name another with controlPlane.bootstrap.tokenFile',
      },
    );
  const tokenFiles =
    token === undefined
      ? []
      : [{ path: BootstrapTokenFile, content: await readFile(token), private: true }];
  return { dir: wanted.dir, files: [...files, ...tokenFiles] };
}
