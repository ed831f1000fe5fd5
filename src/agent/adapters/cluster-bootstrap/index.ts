// SPDX-License-Identifier: Apache-2.0
/**
 * {@link ClusterBootstrap} on the cluster's API, as the admin kubeconfig of the cluster's PKI.
 * The RBAC of deploy/kubernetes/node-bootstrap.yaml goes in by server-side apply (field manager
 * `molt-agent`, forced: these bindings are molt's), so applying it again changes nothing. The
 * token's Secret is created only when absent: a start after the token cleaner removed an expired
 * token must not bring it back, and a re-run must not extend its life.
 */
import { readFile } from 'node:fs/promises';
import { KubernetesObjectApi, PatchStrategy, type KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { bootstrapTokenSecret } from '../../../platform/kube/bootstrap-token.ts';
import { kubeError, loadKubeConfig, statusOf } from '../../../platform/kube/client.ts';
import { packageFile } from '../../../platform/package-files.ts';
import { BootstrapTokenPattern } from '../../../protocol/machine-config-node.ts';
import type { ClusterBootstrap } from '../../ports/cluster-bootstrap.ts';

export interface KubeClusterBootstrapOptions {
  /** The cluster's admin kubeconfig (`<pki.dir>/admin.conf`). */
  readonly kubeconfig: string;
  /** The file holding the token `<id>.<secret>`. */
  readonly tokenFile: string;
  readonly ttlSeconds: number;
  /** @default the package's deploy/kubernetes/node-bootstrap.yaml */
  readonly rbacFile?: string;
}

const FieldManager = 'molt-agent';

async function readToken(file: string): Promise<string> {
  const token = (
    await readFile(file, 'utf8').catch((e: unknown) => {
      throw new MoltError(ErrorCode.MachineInvalid, `cannot read the bootstrap token ${file}`, {
        cause: e,
      });
    })
  ).trim();
  if (!BootstrapTokenPattern.test(token))
    throw new MoltError(
      ErrorCode.MachineInvalid,
      `${file} does not hold a bootstrap token <6 of a-z0-9>.<16 of a-z0-9>`,
      { hint: 'write the token the workers join with (their bootstrapTokenFile) into it' },
    );
  return token;
}

async function rbacObjects(file: string): Promise<KubernetesObject[]> {
  const docs = parseAllDocuments(await readFile(file, 'utf8'));
  return docs.flatMap((d) => {
    const o = d.toJS() as KubernetesObject | null;
    return o === null ? [] : [o];
  });
}

export function createKubeClusterBootstrap(o: KubeClusterBootstrapOptions): ClusterBootstrap {
  return {
    async run(now) {
      const token = await readToken(o.tokenFile);
      const kc = await loadKubeConfig(o.kubeconfig);
      const objects = await rbacObjects(
        o.rbacFile ?? packageFile('deploy', 'kubernetes', 'node-bootstrap.yaml'),
      );
      const generic = KubernetesObjectApi.makeApiClient(kc);
      const rbac: string[] = [];
      for (const object of objects) {
        const name = `${object.kind ?? ''}/${object.metadata?.name ?? ''}`;
        await generic
          .patch(object, undefined, undefined, FieldManager, true, PatchStrategy.ServerSideApply)
          .catch((e: unknown) => {
            throw kubeError(e, `apply ${name}`);
          });
        rbac.push(name);
      }
      const secret = bootstrapTokenSecret(
        token,
        {
          ttlSeconds: o.ttlSeconds,
          description: 'molt: workers join with it (controlPlane.bootstrap)',
        },
        now,
      );
      const created = await generic.create(secret).then(
        () => true,
        (e: unknown) => {
          if (statusOf(e) === 409) return false;
          throw kubeError(e, `create the Secret kube-system/${secret.metadata.name}`);
        },
      );
      return { rbac, token: created ? 'created' : 'present' };
    },
  };
}
