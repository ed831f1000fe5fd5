// SPDX-License-Identifier: Apache-2.0
// The CRDs a user applies (deploy/kubernetes/crds.yaml) are the schemas the operator parses the
// same objects with: the API server prunes every field its CRD does not declare, so a field added
// to a schema and not to the YAML would vanish without a word.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { CrdKinds } from './kinds.ts';
import { crdOf, renderCrds } from './render.ts';
import { structural } from './structural.ts';

const file = join(import.meta.dirname, '../../../deploy/kubernetes/crds.yaml');
const json = (s: z.ZodType) => z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' });

describe('the CRDs', () => {
  it('are the file users apply, as rendered from the schemas (node scripts/crds.ts writes it)', () => {
    assert.equal(readFileSync(file, 'utf8'), renderCrds(), 'run: node scripts/crds.ts');
  });

  it('declare a field the schema gains, so the API server keeps it', () => {
    const hold = CrdKinds.find((k) => k.kind === 'MachineHold');
    assert.ok(hold !== undefined);
    const grown = z.strictObject({
      ...(hold.spec as z.ZodObject).shape,
      ticket: z.string().max(9),
    });
    const crd = crdOf({ ...hold, spec: grown }) as {
      spec: {
        versions: {
          schema: { openAPIV3Schema: { properties: { spec: z.core.JSONSchema.JSONSchema } } };
        }[];
      };
    };
    const spec = crd.spec.versions[0]?.schema.openAPIV3Schema.properties.spec;
    assert.deepEqual(spec?.properties?.['ticket'], { type: 'string', maxLength: 9 });
  });
});

describe('a zod schema made structural', () => {
  it('gives a union of objects one object with every field, and a number-or-string int-or-string', () => {
    const s = z.strictObject({
      provider: z.union([
        z.strictObject({ url: z.string() }),
        z.strictObject({ capi: z.strictObject({}) }),
      ]),
      limit: z.union([z.number().int(), z.string()]),
      on: z.literal(true),
      at: z.number().lt(1),
    });
    assert.deepEqual(structural(json(s)), {
      type: 'object',
      properties: {
        provider: {
          type: 'object',
          properties: { url: { type: 'string' }, capi: { type: 'object' } },
        },
        limit: { 'x-kubernetes-int-or-string': true },
        on: { type: 'boolean', enum: [true] },
        at: { type: 'number', maximum: 1, exclusiveMaximum: true },
      },
      required: ['provider', 'limit', 'on', 'at'],
    });
  });

  it('turns a key pattern into a CEL rule, and leaves defaults to the operator', () => {
    const s = z.record(z.string().regex(/^[a-z]+$/), z.string()).default({});
    assert.deepEqual(structural(json(s)), {
      type: 'object',
      additionalProperties: { type: 'string' },
      'x-kubernetes-validations': [
        { rule: 'self.all(k, k.matches("^[a-z]+$"))', message: 'keys must match ^[a-z]+$' },
      ],
    });
  });

  it('refuses what it cannot type, and an overlay path the schema does not have', () => {
    const s = z.strictObject({ follow: z.unknown() });
    assert.throws(() => structural(json(s)), /follow: a structural schema needs a type/);
    assert.deepEqual(
      structural(json(s), { follow: { 'x-kubernetes-preserve-unknown-fields': true } })[
        'properties'
      ],
      { follow: { 'x-kubernetes-preserve-unknown-fields': true } },
    );
    assert.throws(
      () => structural(json(z.strictObject({ follow: z.string() })), { folow: { maxLength: 3 } }),
      /names no field of the schema: folow/,
    );
  });
});
