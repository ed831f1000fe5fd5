// SPDX-License-Identifier: Apache-2.0
// The CustomResourceDefinitions a user applies (deploy/kubernetes/crds.yaml) against the zod
// schemas the operator parses the same objects with: the API server prunes every field its CRD does
// not declare, so a field added to a schema and not to the YAML would vanish without a word. Each
// kind's spec must name the same fields with the same types (the name comes from metadata).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { poolSchema } from './fleet-schema.ts';
import { imagePolicySchema } from './image-policy.ts';
import { KubernetesClusterSpec } from './kube-cluster.ts';
import { MachineHoldSpec } from './kube-resources.ts';

interface Json {
  readonly type?: string;
  readonly properties?: Readonly<Record<string, Json>>;
  readonly items?: Json;
  readonly anyOf?: readonly Json[];
  readonly oneOf?: readonly Json[];
  readonly allOf?: readonly Json[];
  readonly additionalProperties?: Json | boolean;
}

/** Every field path under `s` (`spec.policies[].kind`), with the JSON types each may have. */
function fields(s: Json | undefined, at = 'spec', out = new Map<string, Set<string>>()) {
  if (s === undefined) return out;
  const here = out.get(at) ?? new Set<string>();
  if (s.type !== undefined) here.add(s.type === 'integer' ? 'number' : s.type);
  out.set(at, here);
  for (const x of [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])]) fields(x, at, out);
  for (const [k, v] of Object.entries(s.properties ?? {})) fields(v, `${at}.${k}`, out);
  if (s.items !== undefined) fields(s.items, `${at}[]`, out);
  if (typeof s.additionalProperties === 'object') fields(s.additionalProperties, `${at}{}`, out);
  return out;
}

const crds = parseAllDocuments(
  readFileSync(join(import.meta.dirname, '../../deploy/kubernetes/crds.yaml'), 'utf8'),
).map((d) => d.toJS() as { spec?: { names?: { kind?: string }; versions?: unknown[] } });

function crdSpec(kind: string): Json {
  const crd = crds.find((d) => d.spec?.names?.kind === kind);
  const version = crd?.spec?.versions?.[0] as
    { schema: { openAPIV3Schema: { properties: { spec: Json } } } } | undefined;
  assert.ok(version !== undefined, `crds.yaml defines ${kind}`);
  return version.schema.openAPIV3Schema.properties.spec;
}

/** Where the YAML and the schema disagree: fields only one names, or types the schema refuses. */
function disagreements(kind: string, schema: z.ZodType, fromMetadata: string[] = []) {
  const ours = fields(z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json);
  for (const f of fromMetadata) ours.delete(f);
  const theirs = fields(crdSpec(kind));
  const out: string[] = [];
  for (const f of ours.keys()) if (!theirs.has(f)) out.push(`${f}: not in crds.yaml (pruned)`);
  for (const [f, types] of theirs) {
    const accepted = ours.get(f);
    if (accepted === undefined) out.push(`${f}: in crds.yaml only`);
    else if ([...types].some((t) => accepted.size > 0 && !accepted.has(t)))
      out.push(
        `${f}: crds.yaml says ${[...types].join('|')}, the schema ${[...accepted].join('|')}`,
      );
  }
  return out;
}

describe('the CRDs and the schemas the operator reads them with', () => {
  it('name the same fields with the same types, for every kind a person declares', () => {
    assert.deepEqual(disagreements('Pool', poolSchema, ['spec.name']), []);
    assert.deepEqual(disagreements('ImagePolicy', imagePolicySchema, ['spec.name']), []);
    assert.deepEqual(disagreements('KubernetesCluster', KubernetesClusterSpec), []);
    assert.deepEqual(disagreements('MachineHold', MachineHoldSpec), []);
  });

  it('catch a field the schema gains and the YAML does not, and a type that drifts', () => {
    const grown = MachineHoldSpec.and(z.object({ ticket: z.string() }));
    assert.deepEqual(disagreements('MachineHold', grown), [
      'spec.ticket: not in crds.yaml (pruned)',
    ]);
    const drifted = z.strictObject({ ...KubernetesClusterSpec.shape, version: z.number() });
    assert.match(
      disagreements('KubernetesCluster', drifted).join('\n'),
      /spec\.version: crds\.yaml says string/,
    );
  });
});
