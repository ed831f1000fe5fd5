// SPDX-License-Identifier: Apache-2.0
// Builders shared by the image tests (no tests here; a *.test.ts name keeps it out of dist).
import type { RepositoryView } from './target.ts';
import type { ImagePolicy } from './types.ts';
import type { WorkloadView } from './units.ts';

export const REPO = 'registry.example.com/acme/web';
export const T0 = Date.parse('2026-11-27T12:00:00.000Z');
export const MIN = 60_000;
export const HOUR = 60 * MIN;

/** `sha256:` and 64 hex digits made from `n`. */
export const dig = (n: number): string => `sha256:${n.toString(16).padStart(64, '0')}`;

export function policy(over: Partial<ImagePolicy> = {}): ImagePolicy {
  return {
    name: 'web',
    repository: REPO,
    follow: { kind: 'rebuilds' },
    workloads: [{ namespaces: ['shop'] }],
    policies: [],
    gm: [],
    ...over,
  };
}

export function repo(
  tags: Record<string, string>,
  over: Partial<Omit<RepositoryView, 'tags'>> = {},
): RepositoryView {
  return { tags: new Map(Object.entries(tags)), indexes: new Map(), signed: new Set(), ...over };
}

export function workload(name: string, over: Partial<WorkloadView> = {}): WorkloadView {
  return {
    kind: 'Deployment',
    namespace: 'shop',
    name,
    labels: {},
    containers: [{ name: 'web', image: `${REPO}:1.8.0-rev2@${dig(1)}` }],
    available: true,
    ...over,
  };
}
