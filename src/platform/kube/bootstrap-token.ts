// SPDX-License-Identifier: Apache-2.0
/**
 * Bootstrap tokens as the API server's bootstrap authenticator reads them: a kube-system Secret
 * `bootstrap-token-<id>` of type bootstrap.kubernetes.io/token, laid out as `kubeadm token create`
 * makes it. Its user is `system:bootstrap:<id>`, in groups system:bootstrappers and
 * system:bootstrappers:molt. Shared by the lab (which makes tokens) and a control-plane machine's
 * agent (which registers the token its config names, docs/adr/0018 §3).
 */
import { randomInt } from 'node:crypto';

export interface BootstrapTokenOptions {
  /** How long the token authenticates; the token cleaner deletes it after. */
  readonly ttlSeconds: number;
  /** Why it exists, as `kubeadm token list` shows it. */
  readonly description: string;
}

/** The Secret, with the fields a reader checks. */
export interface BootstrapTokenSecret {
  readonly apiVersion: 'v1';
  readonly kind: 'Secret';
  readonly metadata: { readonly name: string; readonly namespace: 'kube-system' };
  readonly type: 'bootstrap.kubernetes.io/token';
  readonly stringData: Readonly<Record<string, string>>;
}

const Alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
const randomChars = (n: number): string =>
  Array.from({ length: n }, () => Alphabet[randomInt(Alphabet.length)]).join('');

/** A new token `<id>.<secret>` (6 and 16 characters of [a-z0-9]). */
export const newBootstrapToken = (): string => `${randomChars(6)}.${randomChars(16)}`;

/** RFC 3339 to the second, as the bootstrap token authenticator parses `expiration`. */
const rfc3339 = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The Secret that makes `token` (`<id>.<secret>`) authenticate until `now` + the TTL. */
export function bootstrapTokenSecret(
  token: string,
  o: BootstrapTokenOptions,
  now: Date,
): BootstrapTokenSecret {
  const [id = '', secret = ''] = token.split('.');
  return {
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
}
