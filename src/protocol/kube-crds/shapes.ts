// SPDX-License-Identifier: Apache-2.0
/**
 * What the CRDs add to the schemas the operator parses with: the bounds, patterns and CEL rules
 * the API server checks on `kubectl apply` (the operator's zod schemas say the rest in the
 * Accepted condition), and the schemas of what only the operator writes (the mirrored specs and
 * every status). `hints` annotates shared schemas wherever they appear; the overlays name paths.
 */
import { z } from 'zod';
import { duration } from '../policy-schema.ts';
import { time } from '../fleet-schema.ts';
import type { Json, Overlay } from './structural.ts';

/** Structural-schema keys for a schema wherever it appears (passed to `z.toJSONSchema`). */
export const hints = z.registry<Json>();

hints.add(duration, {
  maxLength: 32,
  pattern: '^([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?$',
  'x-kubernetes-validations': [
    { rule: "self != ''", message: 'must be a duration like 90s, 30m, 2h, 1d or 1h30m' },
  ],
});
hints.add(time, { format: 'date-time' });

/** `overlay`'s paths under `prefix`. */
const at = (prefix: string, overlay: Overlay): Overlay =>
  Object.fromEntries(
    Object.entries(overlay).map(([p, v]) => [
      p === '' || p.startsWith('[') ? `${prefix}${p}` : `${prefix}.${p}`,
      v,
    ]),
  );

const windows: Overlay = {
  '': { maxItems: 16 },
  '[].cron': { maxLength: 128, pattern: '^(@[a-z]+|\\S+(\\s+\\S+){4,5})$' },
  '[].timeZone': {
    maxLength: 64,
    pattern: '^(UTC|[A-Za-z]+(/[A-Za-z0-9_+-]+)+|[A-Z]{3,5}[0-9A-Z+-]*)$',
  },
};

/** The rollout-shaping policies, as `policies` of a Pool and of an ImagePolicy. */
export const policies: Overlay = {
  policies: { maxItems: 32 },
  'policies[]': { minProperties: 1, maxProperties: 1 },
  'policies[].concurrency': {
    'x-kubernetes-int-or-string': true,
    maxLength: 10,
    'x-kubernetes-validations': [
      {
        rule: "type(self) == int ? self >= 0 : self.matches('^(100(\\\\.0+)?|[0-9]{1,2}(\\\\.[0-9]+)?)%$')",
        message: 'must be a count (3) or a percentage from 0% to 100% ("25%")',
      },
    ],
  },
  ...at('policies[].window.windows', windows),
  ...at('policies[].window.exclusions', windows),
  'policies[].zones.label': { maxLength: 317 },
  'policies[].zones.order': { maxItems: 64 },
  'policies[].zones.order[]': { maxLength: 63 },
  'policies[].gate.name': { maxLength: 63 },
  'policies[].gate.url': { maxLength: 2048 },
  'policies[].gate.expectStatus': { minimum: 100, maximum: 599 },
};

/** The pool-style name lists of an ImagePolicy's selectors. */
const names = (path: string): Overlay => ({
  [path]: { maxItems: 256 },
  [`${path}[]`]: { maxLength: 253 },
});

export const imagePolicy: Overlay = {
  repository: { minLength: 1, maxLength: 512 },
  follow: {
    'x-kubernetes-preserve-unknown-fields': true,
    description: 'rebuilds | revisions | {semver: "<range>"}',
  },
  workloads: {
    maxItems: 64,
    description:
      'A bare name in names matches in each namespace the selector looks in, under ["*"] every one; a bare name in canary.workloads only in namespaces the policy names other than "*".',
  },
  ...names('workloads[].namespaces'),
  ...names('workloads[].names'),
  ...names('workloads[].containers'),
  'workloads[].matchLabels': { maxProperties: 64 },
  'workloads[].matchLabels{}': { maxLength: 63 },
  ...names('canary.namespaces'),
  ...names('canary.workloads'),
  platforms: { maxItems: 32 },
  'platforms[]': { maxLength: 64 },
  gm: { maxItems: 256 },
  'gm[].reason': { maxLength: 1024 },
  ...policies,
};

export const pool: Overlay = {
  '': {
    'x-kubernetes-validations': [
      {
        rule: '!(has(self.channel) && has(self.promoteFrom))',
        message: 'a pool follows a channel or promotes from another pool, not both',
      },
      {
        rule: "!has(self.strategy) || self.strategy != 'replace' || has(self.provider)",
        message: 'strategy replace needs a provider: {url: …} or {capi: {}}',
        fieldPath: '.strategy',
      },
    ],
  },
  channel: { minLength: 1, maxLength: 128 },
  promoteFrom: { maxLength: 253 },
  provider: {
    'x-kubernetes-validations': [
      {
        rule: 'has(self.url) != has(self.capi)',
        message: 'a provider is {url: …} (HTTP) or {capi: {}} (Cluster API)',
      },
      {
        rule: '!has(self.capi) || !has(self.timeout)',
        message: 'timeout is for an HTTP provider ({url: …})',
      },
    ],
  },
  'provider.url': { maxLength: 2048, pattern: '^https?://[^\\s/]+' },
  'provider.capi': { maxProperties: 0 },
  ...policies,
};

export const machineHold: Overlay = {
  '': {
    'x-kubernetes-validations': [
      {
        rule: '!(has(self.until) && has(self.version))',
        message: 'a pin (version) lasts until the object is deleted: leave out until',
        fieldPath: '.until',
      },
    ],
  },
  machine: { maxLength: 253 },
  version: {
    description:
      'a pin instead of a hold: the machine stays on this release; rollouts to any other skip it (until the object is deleted)',
  },
};

const component = (name: string): Overlay => ({
  [name]: {
    description:
      'Any flag of the component: writing this object is cluster-admin-equivalent. The flags that open the API to everyone (authorization-mode with AlwaysAllow, anonymous-auth=true, disable-admission-plugins with NodeRestriction) are refused by the operator (Accepted False, MOLT_KUBE_FLAG_INSECURE) unless forceInsecureFlags names them.',
  },
  [`${name}.extraArgs`]: {
    maxProperties: 64,
    'x-kubernetes-validations': [
      {
        rule: 'self.all(k, k.matches("^[a-z0-9][a-z0-9-]{0,62}$"))',
        message: 'flag names without dashes, e.g. audit-log-maxage',
      },
    ],
  },
  [`${name}.extraArgs{}`]: {
    'x-kubernetes-validations': [
      {
        rule: "!self.matches('[[:cntrl:]]')",
        message: 'a flag value is one line: no newline or other control character',
      },
    ],
  },
  [`${name}.forceInsecureFlags[]`]: { maxLength: 63 },
});

export const kubernetesCluster: Overlay = {
  version: { maxLength: 16 },
  bundleRepository: {
    description: 'default: the operator’s release repository with -kubernetes appended',
  },
  ...component('apiserver'),
  ...component('controllerManager'),
  ...component('scheduler'),
  finalize: {
    description:
      'true drops --emulated-version after a minor upgrade: the old minor can no longer be rolled back to (KEP-4330)',
  },
};
