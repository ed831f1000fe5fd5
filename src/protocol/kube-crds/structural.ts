// SPDX-License-Identifier: Apache-2.0
/**
 * A zod schema's JSON Schema (draft 2020-12, `z.toJSONSchema`) as a Kubernetes structural schema
 * (apiextensions.k8s.io/v1 `openAPIV3Schema`): the form the API server validates and prunes with.
 * No library converts between the two — they differ in a handful of rules the API server enforces
 * when a CRD is created, each handled here:
 * - every node names its `type` (or says `x-kubernetes-int-or-string` / preserve-unknown-fields);
 *   a union of objects becomes one object with every branch's fields (the overlay's CEL rules say
 *   which combinations are allowed); a union of an integer and a string is int-or-string;
 * - no `additionalProperties: false` beside `properties` (unknown fields are pruned anyway), no
 *   `propertyNames` (a key pattern becomes a CEL rule), no `const` (an `enum` of one), no
 *   `default` (the operator applies defaults itself; the API server would store them);
 * - OpenAPI 3.0's boolean `exclusiveMinimum`/`exclusiveMaximum`, and only the `date-time` format.
 * A node this cannot express throws, naming its path, so the overlay must say what it is.
 */

/** A JSON Schema node, as zod writes it or as a CRD holds it. */
export type Json = { [key: string]: unknown };

/** Structural-schema additions keyed by path (`policies[].concurrency`, `extraArgs{}`). */
export type Overlay = Readonly<Record<string, Json>>;

const Dropped = new Set(['$schema', 'default', 'id', 'title', 'examples']);
const Typed = ['x-kubernetes-int-or-string', 'x-kubernetes-preserve-unknown-fields'];

export function structural(node: Json, overlay: Overlay = {}): Json {
  const used = new Set<string>();
  const out = convert(node, '', overlay, used);
  const unused = Object.keys(overlay).filter((p) => !used.has(p));
  if (unused.length > 0)
    throw new Error(`the overlay names no field of the schema: ${unused.join(', ')}`);
  return out;
}

type Walk = (child: Json, path: string) => Json;

/** What each JSON Schema keyword becomes (an absent keyword is kept as it is). */
const Keywords: Readonly<Record<string, (v: unknown, walk: Walk, at: string) => Json>> = {
  additionalProperties: (v, walk, at) =>
    v === false ? {} : { additionalProperties: walk(v as Json, `${at}{}`) },
  items: (v, walk, at) => ({ items: walk(v as Json, `${at}[]`) }),
  properties: (v, walk, at) => {
    const entries = Object.entries(v as Record<string, Json>);
    if (entries.length === 0) return {};
    const child = (name: string) => (at === '' ? name : `${at}.${name}`);
    return { properties: Object.fromEntries(entries.map(([n, p]) => [n, walk(p, child(n))])) };
  },
  const: (v) => ({ enum: [v] }),
  format: (v) => (v === 'date-time' ? { format: v } : {}),
  exclusiveMinimum: (v) => ({ minimum: v, exclusiveMinimum: true }),
  exclusiveMaximum: (v) => ({ maximum: v, exclusiveMaximum: true }),
  // zod's bounds of a safe integer: an int64 in Kubernetes needs none.
  minimum: (v) => (v === -Number.MAX_SAFE_INTEGER ? {} : { minimum: v }),
  maximum: (v) => (v === Number.MAX_SAFE_INTEGER ? {} : { maximum: v }),
  propertyNames: (v) => {
    const pattern = (v as Json)['pattern'];
    if (typeof pattern !== 'string') return {};
    const rule = `self.all(k, k.matches(${JSON.stringify(pattern)}))`;
    return { 'x-kubernetes-validations': [{ rule, message: `keys must match ${pattern}` }] };
  },
};

function convert(node: Json, at: string, overlay: Overlay, used: Set<string>): Json {
  const walk: Walk = (child, path) => convert(child, path, overlay, used);
  const out: Json = {};
  for (const [k, v] of Object.entries(union(node, at))) {
    if (Dropped.has(k)) continue;
    const keyword = Keywords[k];
    Object.assign(out, keyword === undefined ? { [k]: v } : keyword(v, walk, at));
  }
  const extra = overlay[at];
  if (extra !== undefined) used.add(at);
  const merged = { ...out, ...extra };
  if (merged['type'] === undefined && !Typed.some((t) => merged[t] === true))
    throw new Error(
      `${at || 'the root'}: a structural schema needs a type; give it in the overlay`,
    );
  return merged;
}

/** One node for a union zod wrote as `anyOf`, when Kubernetes has a form for it. */
function union(node: Json, at: string): Json {
  const { anyOf, ...rest } = node;
  if (anyOf === undefined) return node;
  const branches = anyOf as Json[];
  const types = new Set(branches.map((b) => b['type']));
  if (types.size === 2 && types.has('integer') && types.has('string'))
    return { ...rest, 'x-kubernetes-int-or-string': true };
  if (types.size === 1 && types.has('object')) {
    const properties = Object.assign({}, ...branches.map((b) => b['properties'] ?? {})) as Json;
    return { ...rest, type: 'object', properties };
  }
  throw new Error(`${at}: a union of ${[...types].join(', ')} has no structural form`);
}
