// SPDX-License-Identifier: Apache-2.0
// Fuzz target (docs/patterns/testing.md): the fleet file (YAML or JSON, schema, references, core's
// policy checks). A file that parses is one the planner can plan: parsing is the only gate.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parse, stringify } from 'yaml';
import { accepted, fuzzParameters, fuzzText, mutatedJson, outcome } from '../testkit/fuzz.ts';
import { ErrorCode } from '../core/errors.ts';
import { explain, plan } from '../core/rollout/plan.ts';
import { parseFleet } from './fleet.ts';

const good = `
fleet:
  policies: [{concurrency: "10%"}]
pools:
  - name: control-plane
    channel: stable
    policies: [{controlPlaneFirst: true}, {concurrency: 1}]
  - name: workers
    channel: stable
    requireApproval: false
    policies:
      - concurrency: "33%"
      - rate: {count: 2, per: 1h}
      - window:
          windows: [{cron: "0 2 * * *", duration: 4h, timeZone: Europe/Berlin}]
          exclusions: [{cron: "0 0 24 12 *", duration: 1d}]
      - canary: {count: 1, soak: 10m}
      - batches: {soak: 15m}
      - machineSoak: 2m
      - zones: {label: zone, order: [a, b]}
      - failureBudget: 1
machines:
  - {id: cp-1, role: control-plane, pool: control-plane, cluster: lab, labels: {zone: a}, version: 1.0.0, digest: "sha256:aa", available: true}
  - id: w-1
    pool: workers
    labels: {zone: b}
    hold: {reason: disk swap, until: "2026-11-24T00:00:00Z"}
    pin: {version: 1.0.0, reason: vendor driver}
    wariness: 0.5
  - {id: w-2, pool: workers, labels: {zone: a}}
rollouts:
  - id: r1
    pool: workers
    target: {version: 1.1.0, digest: "sha256:bb"}
    state: Active
    createdAt: "2026-11-23T10:00:00Z"
    phased: {startFraction: 0.1, duration: 1d}
    machines:
      w-1: {phase: Succeeded, startedAt: "2026-11-23T10:05:00Z", finishedAt: "2026-11-23T10:15:30+01:00"}
starts: [{machine: w-1, pool: workers, rollout: r1, at: "2026-11-23T10:05:00Z"}]
leases: {lab: cp-1}
`;
const small = 'pools: [{name: p, policies: [{concurrency: 1}]}]\nmachines: [{id: m, pool: p}]\n';
const fleetCodes = [
  ErrorCode.FleetInvalid,
  ErrorCode.UnknownPool,
  ErrorCode.UnknownMachine,
  ErrorCode.PolicyInvalid,
];
const now = Date.parse('2026-11-23T11:00:00Z');

/** Text edits of the file, or field edits of its tree written back as YAML or JSON. */
const fleetText = fc.oneof(
  fuzzText([good, small], 400),
  fc
    .tuple(mutatedJson([parse(good) as unknown, parse(small) as unknown], 4), fc.boolean())
    .map(([tree, asJson]) => (asJson ? JSON.stringify(tree) : stringify(tree))),
);

describe('fuzz: the fleet file', () => {
  it('parses into a snapshot the planner plans, or throws a fleet code naming the place', () => {
    fc.assert(
      fc.property(fleetText, (text) => {
        const r = outcome(() => parseFleet(text, { source: 'fleet.yaml' }), 'parseFleet');
        if (!accepted(r, ...fleetCodes)) {
          assert.match(r.error.message, /^fleet\.yaml(:\d+:\d+)?: /);
          return;
        }
        assert.ok(outcome(() => plan(r.value, now), 'plan').ok);
        assert.ok(outcome(() => explain(r.value, now), 'explain').ok);
      }),
      fuzzParameters(150),
    );
  });
});
