// SPDX-License-Identifier: Apache-2.0
/**
 * The world the image driver's tests run in (tests only): one repository, digests by number,
 * Deployments on the fake workloads running `1.8.0-rev2@<digest>`, and a policy following its
 * rebuilds; and an ImagePolicy object's verdict (the condition tests).
 */
import type { ImagePolicy } from '../core/images/types.ts';
import type { DeclaredVerdict } from '../operator/ports/declared.ts';
import type { FakeWorkloads } from '../operator/ports/workloads.fake.ts';

export const repo = 'registry.lab:5000/acme/web';
/** `sha256:` and 64 hex digits made from `n` (`d(1)` is `0101…`). */
export const d = (n: number): string => `sha256:${String(n).padStart(2, '0').repeat(32)}`;
/** The image `1.8.0-rev2@digest` of {@link repo}. */
export const at = (digest: string): string => `${repo}:1.8.0-rev2@${digest}`;

/** Put a Deployment per `[namespace, name]`, its one container `web` on `image`. */
export function putDeployments(
  workloads: FakeWorkloads,
  names: readonly (readonly [string, string])[],
  image: string,
): void {
  for (const [namespace, name] of names)
    workloads.put({
      kind: 'Deployment',
      namespace,
      name,
      labels: {},
      containers: [{ name: 'web', image }],
    });
}

/** Policy `web`: every Deployment's `web` container, in every namespace, follows {@link repo}'s rebuilds. */
export const followRebuilds = (over: Partial<ImagePolicy> = {}): ImagePolicy => ({
  name: 'web',
  repository: repo,
  follow: { kind: 'rebuilds' },
  workloads: [{ namespaces: ['*'], kinds: ['Deployment'] }],
  policies: [],
  gm: [],
  ...over,
});

/** An ImagePolicy object's verdict: `Accepted`, or the reason it is not. */
export const verdict = (name: string, reason: string): DeclaredVerdict => ({
  kind: 'ImagePolicy',
  name,
  generation: 1,
  accepted: reason === 'Accepted',
  reason,
  message: '',
});
