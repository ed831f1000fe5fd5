// SPDX-License-Identifier: Apache-2.0
/**
 * `deploy/kubernetes/crds.yaml`, rendered from the kinds (`kinds.ts`): each spec's schema is the
 * zod schema the operator parses the object with, made structural, plus the CRD's own bounds and
 * CEL rules; each status is the shape the operator writes.
 */
import { Document } from 'yaml';
import { z } from 'zod';
import { wrap } from '../flags.ts';
import { MoltGroup, MoltVersion } from '../kube-resources.ts';
import { type CrdKind, CrdKinds } from './kinds.ts';
import { hints } from './shapes.ts';
import { type Json, structural } from './structural.ts';

const Header = `molt's custom resources, rendered from the schemas the operator reads them with
(src/protocol/kube-crds; \`node scripts/crds.ts\` writes this file — edit those, not this). Install
once per cluster: kubectl apply -f deploy/kubernetes/crds.yaml (or kubectl apply -k deploy/kubernetes).`;

const jsonSchema = (s: z.ZodType): Json =>
  z.toJSONSchema(s, { io: 'input', unrepresentable: 'any', metadata: hints });

function withoutFields(schema: Json, omit: readonly string[]): Json {
  const kept = <T>(entries: [string, T][]) => entries.filter(([f]) => !omit.includes(f));
  const properties = Object.fromEntries(kept(Object.entries(schema['properties'] as Json)));
  const required = ((schema['required'] as string[] | undefined) ?? []).filter(
    (f) => !omit.includes(f),
  );
  return {
    ...Object.fromEntries(Object.entries(schema).filter(([k]) => k !== 'required')),
    properties,
    ...(required.length > 0 && { required }),
  };
}

/** One CustomResourceDefinition as the API server takes it. */
export function crdOf(k: CrdKind): Json {
  const spec = structural(withoutFields(jsonSchema(k.spec), k.omit ?? []), k.overlay);
  const properties: Json = { spec };
  if (k.status !== undefined) properties['status'] = structural(jsonSchema(k.status));
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${k.plural}.${MoltGroup}` },
    spec: {
      group: MoltGroup,
      scope: 'Namespaced',
      names: {
        kind: k.kind,
        listKind: `${k.kind}List`,
        plural: k.plural,
        singular: k.kind.toLowerCase(),
        shortNames: [k.shortName],
        ...(k.category && { categories: ['molt'] }),
      },
      versions: [
        {
          name: MoltVersion,
          served: true,
          storage: true,
          ...(k.status !== undefined && { subresources: { status: {} } }),
          additionalPrinterColumns: k.columns,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              ...(k.specRequired === true && { required: ['spec'] }),
              properties,
            },
          },
        },
      ],
    },
  };
}

/** The whole file: one document per kind, each with what it is for above it. */
export function renderCrds(kinds: readonly CrdKind[] = CrdKinds): string {
  return kinds
    .map((k, i) => {
      const doc = new Document(crdOf(k), { aliasDuplicateObjects: false });
      doc.commentBefore = [...(i === 0 ? [Header, ''] : []), k.about]
        .map((t) =>
          t
            .split('\n')
            .flatMap((para) => (para === '' ? [''] : wrap(para, 98).map((l) => ` ${l}`)))
            .join('\n'),
        )
        .join('\n');
      return doc.toString({ lineWidth: 0 });
    })
    .join('---\n');
}
