// SPDX-License-Identifier: Apache-2.0
/**
 * Bounded fuzzing of molt's parsers of untrusted input as fast-check properties (the
 * `*.fuzz.test.ts` files; their table is in docs/patterns/testing.md). A parser given anything
 * either returns a value or throws a `MoltError` with a known code — never a `TypeError`, a
 * `RangeError`, a `MOLT_INTERNAL`, a stack trace for a person, and never a hang.
 *
 * Runs are bounded so `npm test` stays fast: {@link fuzzRuns} is a per-target default, raised for
 * a slow run with `MOLT_FUZZ_RUNS=20000 node --test 'src/**\/*.fuzz.test.ts'`. The inputs are
 * both fully random and structure-aware mutations of valid inputs ({@link mutatedText},
 * {@link mutatedJson}), so the fuzzing gets past a parser's first check.
 */
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import fc from 'fast-check';
import { ErrorCode, isMoltError, type MoltError } from '../core/errors.ts';

/** Every code a parser may throw: all of them but `MOLT_INTERNAL`, which means a bug. */
const knownCodes: ReadonlySet<string> = new Set(
  Object.values(ErrorCode).filter((c) => c !== ErrorCode.Internal),
);

/**
 * How long one call may take before it counts as a hang. Not a speed target: inputs are at most
 * a few KB and every parser answers in well under a millisecond, so only super-linear work
 * (catastrophic regex backtracking, a loop that does not advance) gets near it. Ten seconds, not
 * two: a whole test run (QEMU machines and control planes beside the unit files) once held a
 * fleet parse off the CPU for 2.1 s. `MOLT_FUZZ_HANG_MS` overrides it.
 */
export const hangMs = Number(process.env['MOLT_FUZZ_HANG_MS'] ?? 10_000);

/** The number of runs of one property: `fallback`, or `MOLT_FUZZ_RUNS` when set (the slow run). */
export function fuzzRuns(fallback: number): number {
  const env = Number(process.env['MOLT_FUZZ_RUNS']);
  return Number.isSafeInteger(env) && env > 0 ? env : fallback;
}

/** fast-check's parameters for one target: bounded runs, async runs cut at `hangMs`. */
export function fuzzParameters(fallbackRuns: number): fc.Parameters<unknown> {
  return { numRuns: fuzzRuns(fallbackRuns), plugins: [fc.timeout(hangMs)] };
}

/** Fail unless `e` is a MoltError whose code is in the ErrorCode table (and not MOLT_INTERNAL). */
export function assertMoltError(e: unknown, what = 'the parser'): asserts e is MoltError {
  if (!isMoltError(e)) {
    const shown = e instanceof Error ? (e.stack ?? e.message) : String(e);
    assert.fail(`${what} threw something that is not a MoltError: ${shown}`);
  }
  assert.ok(knownCodes.has(e.code), `${what} threw a MoltError with code ${e.code}`);
}

/** What one call of a parser came to: a value, or a MoltError already checked. */
export type Outcome<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: MoltError };

function timed(started: number, what: string): void {
  const ms = performance.now() - started;
  assert.ok(ms < hangMs, `${what} took ${Math.round(ms)} ms on one input: a hang`);
}

/**
 * True when the parser returned a value; when it threw, checks that the code is one of `codes`
 * (the codes the parser documents) and returns false: `if (!accepted(r, code)) return;`.
 */
export function accepted<T>(
  r: Outcome<T>,
  ...codes: readonly ErrorCode[]
): r is { readonly ok: true; readonly value: T } {
  if (r.ok) return true;
  assert.ok(
    codes.includes(r.error.code),
    `${r.error.code} (${r.error.message}) is not one of ${codes.join(', ')}`,
  );
  return false;
}

/** Call a synchronous parser; a non-MoltError throw or a hang fails the property. */
export function outcome<T>(parse: () => T, what?: string): Outcome<T> {
  const started = performance.now();
  try {
    const value = parse();
    timed(started, what ?? 'the parser');
    return { ok: true, value };
  } catch (e) {
    timed(started, what ?? 'the parser');
    assertMoltError(e, what);
    return { ok: false, error: e };
  }
}

/** Call an asynchronous parser (fast-check's `timeout` bounds a hang). */
export async function outcomeAsync<T>(parse: () => Promise<T>, what?: string): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await parse() };
  } catch (e) {
    assertMoltError(e, what);
    return { ok: false, error: e };
  }
}

/** Characters that matter to parsers: separators, quotes, escapes, line ends, NUL, non-ASCII. */
const specials = [
  ...Array.from(':=,;#"\'\\/.-_ \t\r\n\0{}[]<>()@%*?|&!$`~+'),
  'é',
  '\u00a0',
  '\u2028',
  '\ud83d\ude00',
  '\ud800',
];

/** Short random text: any UTF-16 units, printable ASCII, or the parser-significant characters. */
export function anyText(maxLength = 200): fc.Arbitrary<string> {
  return fc.oneof(
    fc.string({ unit: 'binary', maxLength }),
    fc.string({ maxLength }),
    fc.string({ unit: fc.constantFrom(...specials), maxLength }),
    fc.string({
      unit: fc.oneof(
        fc.constantFrom(...specials),
        fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
      ),
      maxLength,
    }),
  );
}

/** Random bytes, up to `maxLength`. */
export function anyBytes(maxLength = 2048): fc.Arbitrary<Uint8Array> {
  return fc.uint8Array({ maxLength });
}

/** One edit of a string: delete, insert, replace or duplicate a slice. */
const edit: fc.Arbitrary<EditShape> = fc.record({
  kind: fc.constantFrom('delete', 'insert', 'replace', 'duplicate', 'truncate' as const),
  at: fc.nat(),
  length: fc.nat({ max: 16 }),
  text: anyText(12),
});

interface EditShape {
  readonly kind: 'delete' | 'insert' | 'replace' | 'duplicate' | 'truncate';
  readonly at: number;
  readonly length: number;
  readonly text: string;
}

function applyOne(s: string, e: EditShape): string {
  const at = s.length === 0 ? 0 : e.at % (s.length + 1);
  const end = Math.min(s.length, at + e.length);
  switch (e.kind) {
    case 'delete':
      return s.slice(0, at) + s.slice(end);
    case 'insert':
      return s.slice(0, at) + e.text + s.slice(at);
    case 'replace':
      return s.slice(0, at) + e.text + s.slice(end);
    case 'duplicate':
      return s.slice(0, end) + s.slice(at, end) + s.slice(end);
    case 'truncate':
      return s.slice(0, at);
  }
}

/** One of `valid`, with up to `maxEdits` random edits: gets past a parser's first checks. */
export function mutatedText(valid: readonly string[], maxEdits = 4): fc.Arbitrary<string> {
  return fc
    .tuple(fc.constantFrom(...valid), fc.array(edit, { maxLength: maxEdits }))
    .map(([s, edits]) => edits.reduce(applyOne, s));
}

/** Random text, or a mutation of one of `valid`: the usual input of a text parser. */
export function fuzzText(valid: readonly string[], maxLength = 200): fc.Arbitrary<string> {
  return fc.oneof(anyText(maxLength), mutatedText(valid), fc.constantFrom(...valid));
}

/** JSON values a schema must refuse or accept: odd numbers, long strings, deep nesting. */
export function anyJson(): fc.Arbitrary<unknown> {
  const odd = fc.constantFrom<unknown>(
    -1,
    0,
    1.5,
    2 ** 53,
    -(2 ** 63),
    1e308,
    '',
    ' ',
    '0',
    'null',
  );
  return fc.oneof(fc.jsonValue({ maxDepth: 4 }), odd, anyText(40));
}

type Json = unknown;

/** Every path (keys and indexes) inside `value`, the root included. */
function pathsOf(value: Json, prefix: readonly (string | number)[] = []): (string | number)[][] {
  const out = [[...prefix]];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...pathsOf(v, [...prefix, i])));
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) out.push(...pathsOf(v, [...prefix, k]));
  return out;
}

interface JsonEdit {
  readonly kind: 'replace' | 'delete' | 'add';
  readonly at: number;
  readonly key: string;
  readonly value: unknown;
}

const jsonEdit: fc.Arbitrary<JsonEdit> = fc.record({
  kind: fc.constantFrom('replace', 'delete', 'add' as const),
  at: fc.nat(),
  key: fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('__proto__', 'constructor', 'id')),
  value: anyJson(),
});

type Container = Record<string | number, unknown>;

/** Apply `e` to the field `key` of `parent`. */
function editField(parent: Container, key: string | number, e: JsonEdit): void {
  const target = parent[key];
  if (e.kind === 'replace') parent[key] = e.value;
  else if (e.kind === 'delete' && Array.isArray(parent)) parent.splice(Number(key), 1);
  else if (e.kind === 'delete') Reflect.deleteProperty(parent, key);
  else if (Array.isArray(target)) target.push(e.value);
  else if (target !== null && typeof target === 'object') {
    // defineProperty, so `__proto__` becomes an own field as JSON.parse would make it.
    const field = { value: e.value, enumerable: true, writable: true, configurable: true };
    Object.defineProperty(target, e.key, field);
  }
}

/** `value` with one edit at one of its paths (a copy; `value` is untouched). */
function applyJsonEdit(value: Json, e: JsonEdit): Json {
  const paths = pathsOf(value);
  const path = paths[e.at % paths.length] ?? [];
  if (path.length === 0) return e.kind === 'replace' ? e.value : value;
  const root = structuredClone(value) as Container;
  let parent = root;
  for (const step of path.slice(0, -1)) parent = parent[step] as Container;
  editField(parent, path[path.length - 1] ?? '', e);
  return root;
}

/** One of `valid` with up to `maxEdits` structural edits (replace, delete or add a field). */
export function mutatedJson(valid: readonly Json[], maxEdits = 3): fc.Arbitrary<Json> {
  return fc
    .tuple(fc.constantFrom(...valid), fc.array(jsonEdit, { minLength: 1, maxLength: maxEdits }))
    .map(([v, edits]) => edits.reduce(applyJsonEdit, v));
}

/** Arbitrary JSON, or a mutation of one of `valid`: the usual input of a schema. */
export function fuzzJson(valid: readonly Json[]): fc.Arbitrary<Json> {
  return fc.oneof(anyJson(), mutatedJson(valid), fc.constantFrom(...valid));
}
