// SPDX-License-Identifier: Apache-2.0
/**
 * TLS bootstrap on the lab control plane (deploy/kubernetes/node-bootstrap.yaml): the RBAC that
 * lets a bootstrap token ask for a kubelet client certificate and have it approved, and the tokens
 * themselves, made as `kubeadm token create` makes them.
 */
import { execFile } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Agent, fetch } from 'undici';
import { packageFile } from '../../platform/package-files.ts';

const run = promisify(execFile);

export interface BootstrapTokenOptions {
  /** How long the token authenticates; the token cleaner deletes it after. */
  readonly ttlSeconds: number;
  /** Why it exists, as `kubeadm token list` shows it. */
  readonly description: string;
}

/** The bindings of node-bootstrap.yaml, applied as a user would. */
export async function applyNodeBootstrapRbac(bins: string, kubeconfig: string): Promise<void> {
  const file = packageFile('deploy', 'kubernetes', 'node-bootstrap.yaml');
  await run(join(bins, 'kubectl'), ['--kubeconfig', kubeconfig, 'apply', '-f', file]);
}

const Alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
const randomChars = (n: number): string =>
  Array.from({ length: n }, () => Alphabet[randomInt(Alphabet.length)]).join('');

/** RFC 3339 to the second, as the bootstrap token authenticator parses `expiration`. */
const rfc3339 = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * Create the kube-system Secret `bootstrap-token-<id>` and return the token `<id>.<secret>`. Its
 * user is `system:bootstrap:<id>` in groups system:bootstrappers and system:bootstrappers:molt.
 */
export async function createBootstrapToken(
  api: { readonly server: string; readonly ca: string; readonly bearer: string },
  o: BootstrapTokenOptions,
  now: Date = new Date(),
): Promise<string> {
  const id = randomChars(6);
  const secret = randomChars(16);
  const body = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `bootstrap-token-${id}`, namespace: 'kube-system' },
    type: 'bootstrap.kubernetes.io/token',
    stringData: {
      'token-id': id,
      'token-secret': secret,
      description: o.description,
      expiration: rfc3339(new Date(now.getTime() + o.ttlSeconds * 1000)),
      'usage-bootstrap-authentication': 'true',
      'usage-bootstrap-signing': 'true',
      'auth-extra-groups': 'system:bootstrappers:molt',
    },
  };
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
  return `${id}.${secret}`;
}
