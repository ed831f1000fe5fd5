// SPDX-License-Identifier: Apache-2.0
/**
 * TLS bootstrap on the lab control plane (deploy/kubernetes/node-bootstrap.yaml): the RBAC that
 * lets a bootstrap token ask for a kubelet client certificate and have it approved, and the tokens
 * themselves, made as `kubeadm token create` makes them.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Agent, fetch } from 'undici';
import {
  bootstrapTokenSecret,
  newBootstrapToken,
  type BootstrapTokenOptions,
} from '../../platform/kube/bootstrap-token.ts';
import { packageFile } from '../../platform/package-files.ts';

export type { BootstrapTokenOptions } from '../../platform/kube/bootstrap-token.ts';

const run = promisify(execFile);

/** The bindings of node-bootstrap.yaml, applied as a user would. */
export async function applyNodeBootstrapRbac(bins: string, kubeconfig: string): Promise<void> {
  const file = packageFile('deploy', 'kubernetes', 'node-bootstrap.yaml');
  await run(join(bins, 'kubectl'), ['--kubeconfig', kubeconfig, 'apply', '-f', file]);
}

/**
 * Create the kube-system Secret `bootstrap-token-<id>` and return the token `<id>.<secret>`. Its
 * user is `system:bootstrap:<id>` in groups system:bootstrappers and system:bootstrappers:molt.
 */
export async function createBootstrapToken(
  api: { readonly server: string; readonly ca: string; readonly bearer: string },
  o: BootstrapTokenOptions,
  now: Date = new Date(),
): Promise<string> {
  const token = newBootstrapToken();
  const body = bootstrapTokenSecret(token, o, now);
  const dispatcher = new Agent({ connect: { ca: api.ca } });
  try {
    const res = await fetch(`${api.server}/api/v1/namespaces/kube-system/secrets`, {
      method: 'POST',
      dispatcher,
      headers: { authorization: `Bearer ${api.bearer}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status !== 201)
      throw new Error(`creating a bootstrap token: ${String(res.status)} ${await res.text()}`);
  } finally {
    await dispatcher.close();
  }
  return token;
}
