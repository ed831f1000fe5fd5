// SPDX-License-Identifier: Apache-2.0
/**
 * The fleet file (docs/adr/0005 §3): machines, pools with their policies, rollouts and the start
 * history, written by people in YAML (or JSON) and read into core's {@link FleetSnapshot}.
 * Durations are strings (`90s`, `30m`, `2h`, `1d`, `1h30m`), limits a count (`3`) or a
 * percentage (`"25%"`), times ISO 8601 with a zone (`2026-11-23T10:00:00Z`). Every object is
 * strict: an unknown field is an error (a typo must not silently drop a limit). Errors name the
 * place: `fleet.yaml:12:7: pools[1].policies[0].concurrency: …`.
 *
 * ```yaml
 * fleet:                          # optional; policies counted over the whole fleet
 *   policies: [{concurrency: "10%"}]
 * pools:
 *   - name: workers
 *     channel: stable             # optional
 *     requireApproval: false      # optional
 *     onHalt: stop                # optional: stop (wait for a person) or rollback (fleet-wide, by itself)
 *     onHold: wait                # optional: wait (for held machines) or skip (finish without them; they catch up later)
 *     stage: {ahead: true, concurrency: 2}  # optional: pull and write the release while machines wait; their start only reboots
 *     policies:                   # each item has exactly one key
 *       - concurrency: "33%"      # or a count: 2
 *       - rate: {count: 2, per: 1h}
 *       - window: {windows: [{cron: "0 2 * * *", duration: 4h, timeZone: Europe/Berlin}], exclusions: []}
 *       - canary: {count: 1, soak: 10m}
 *       - batches: {soak: 15m}
 *       - machineSoak: 2m
 *       - zones: {label: zone, order: [a, b]}   # order optional
 *       - controlPlaneFirst: true
 *       - failureBudget: 1
 * machines:                       # role defaults to worker, labels to {}, available to true
 *   - {id: w-1, role: worker, pool: workers, cluster: lab, labels: {zone: a}, version: 1.0.0,
 *      digest: "sha256:…", available: true, hold: {reason: …, until: <time>},
 *      pin: {version: 1.0.0, reason: …}, wariness: 0.3}
 * rollouts:                       # optional
 *   - {id: r1, pool: workers, target: {version: 1.1.0, digest: "sha256:…"}, state: Active,
 *      createdAt: <time>, phased: {startFraction: 0.1, duration: 7d},
 *      machines: {w-1: {phase: Succeeded, startedAt: <time>, finishedAt: <time>, reason: …}}}
 * starts: [{machine: w-1, pool: workers, rollout: r1, at: <time>}]   # optional
 * leases: {lab: cp-1}             # optional; control-plane lease holder per cluster
 * clusters:                       # optional; 1- or 2-machine control planes wait unless accepted
 *   - {name: lab, smallControlPlane: accept-downtime}
 * ```
 *
 * Shape errors raise `MOLT_FLEET_INVALID` (also duplicate ids), references to pools and machines
 * the file does not define `MOLT_UNKNOWN_POOL` / `MOLT_UNKNOWN_MACHINE`; what the shape cannot say
 * (cron, time zones, percent over 100, contradictions) is core's `validatePolicies`
 * (`MOLT_POLICY_INVALID`, one rule for the file and the store), its error placed in the file.
 * Start records are history and may name machines that are gone.
 */
import {
  isMap,
  isNode,
  isScalar,
  LineCounter,
  parseDocument,
  type Document,
  type Node,
} from 'yaml';
import type { z } from 'zod';
import { ErrorCode, errorMessage, isMoltError, MoltError } from '../core/errors.ts';
import { validatePolicies } from '../core/rollout/index.ts';
import type { FleetSnapshot } from '../core/rollout/types.ts';
import { checkReferences, type Path, type Report } from './fleet-references.ts';
import { checkClusters } from './fleet-parts.ts';
import { FleetFile } from './fleet-schema.ts';

export { FleetFile } from './fleet-schema.ts';

/** One problem in a fleet file, where it is and what is wrong. */
export interface FleetIssue {
  readonly line: number;
  readonly col: number;
  /** `pools[1].policies[0].concurrency`; empty for the document itself. */
  readonly path: string;
  readonly message: string;
}

/** Options of {@link parseFleet}. */
export interface ParseFleetOptions {
  /** The file name errors start with. @default 'fleet' */
  readonly source?: string;
  /**
   * Machines may name pools the file does not define: they are declared elsewhere (molt.dev
   * `Pool` objects, docs/adr/0011). @default false
   */
  readonly poolsDeclaredElsewhere?: boolean;
}

/**
 * Read a fleet file (YAML or JSON) into core's snapshot, checked by core's `validatePolicies`.
 * Throws `MOLT_FLEET_INVALID`, `MOLT_UNKNOWN_POOL`, `MOLT_UNKNOWN_MACHINE` or
 * `MOLT_POLICY_INVALID`, each naming `file:line:col: path` of the offending field.
 */
export function parseFleet(text: string, options: ParseFleetOptions = {}): FleetSnapshot {
  const source = options.source ?? 'fleet';
  const { data, where } = parseLocated(FleetFile, text, source);
  const report: Report = (code, issue) => {
    throw fleetError(code, source, [where.issue(...issue)]);
  };
  const parsed = { data };
  checkReferences(parsed.data, report, options.poolsDeclaredElsewhere === true);
  checkClusters(parsed.data, report);
  const { pools, fleetPolicies, machines } = parsed.data;
  try {
    validatePolicies(pools, fleetPolicies, machines);
  } catch (e) {
    throw isMoltError(e, ErrorCode.PolicyInvalid) ? placePolicyError(e, where, source) : e;
  }
  return parsed.data;
}

/**
 * Read `text` (YAML or JSON) with `schema`; `MOLT_FLEET_INVALID` (or the one code the schema's
 * issues name) for bad syntax or shape, each issue placed at `source:line:col: path`. Answers the
 * value and where each of its paths is in the text.
 */
export function parseLocated<T>(
  schema: z.ZodType<T>,
  text: string,
  source: string,
): { readonly data: T; readonly where: Locator } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: true, uniqueKeys: true });
  const where = new Locator(doc, lineCounter);
  const [syntax] = doc.errors;
  if (syntax !== undefined) {
    const { line = 1, col = 1 } = syntax.linePos?.[0] ?? {};
    const message = (syntax.message.split('\n')[0] ?? '').replace(
      / at line \d+, column \d+:?$/,
      '',
    );
    const issue = { line, col, path: '', message };
    throw fleetError(ErrorCode.FleetInvalid, source, [issue], {
      hint: 'fix the YAML syntax at that line',
    });
  }
  const parsed = schema.safeParse(toJs(doc, source), { reportInput: true });
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) =>
      where.issue(pathOf(i.path), describe(i), keyOf(i)),
    );
    throw fleetError(issueCode(parsed.error.issues), source, issues);
  }
  return { data: parsed.data, where };
}

/**
 * Core names the offending field as written (`pools[1].policies[0].window.windows[0].cron`); say
 * where it is in the file, with its line (`fleet.policies` for core's `fleetPolicies`).
 */
function placePolicyError(e: MoltError, where: Locator, source: string): MoltError {
  const corePath = typeof e.details?.['path'] === 'string' ? e.details['path'] : '';
  const path = filePath(corePath);
  if (path === undefined) return e;
  const prefix = `${corePath}: `;
  const message = e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
  return fleetError(e.code, source, [where.issue(path, message)], { hint: e.hint, cause: e });
}

/** The file's path of a policy field core names, or undefined for a path outside policies. */
function filePath(corePath: string): Path | undefined {
  const m = /^(?:fleetPolicies|pools\[(\d+)\]\.policies)\[(\d+)\](.*)$/.exec(corePath);
  if (m === null) return undefined;
  const [, pool, index = '0', rest = ''] = m;
  const item: Path =
    pool === undefined
      ? ['fleet', 'policies', Number(index)]
      : ['pools', Number(pool), 'policies', Number(index)];
  const fields = rest
    .split(/[.[\]]/)
    .filter((f) => f !== '')
    .map((f) => (/^\d+$/.test(f) ? Number(f) : f));
  return [...item, ...fields];
}

/**
 * The code of a schema refusal: the one code its issues name (`params.code`, set by the schema for
 * refusals that have their own, e.g. `MOLT_KUBE_FLAG_INSECURE`), else `MOLT_FLEET_INVALID`.
 */
function issueCode(issues: readonly object[]): ErrorCode {
  const codes = new Set(
    issues.map((i) =>
      'params' in i && typeof i.params === 'object' && i.params !== null && 'code' in i.params
        ? i.params.code
        : undefined,
    ),
  );
  const [only] = codes;
  const known: readonly unknown[] = Object.values(ErrorCode);
  return codes.size === 1 && known.includes(only) ? (only as ErrorCode) : ErrorCode.FleetInvalid;
}

function toJs(doc: Document, source: string): unknown {
  try {
    return doc.toJS({ maxAliasCount: 1000 });
  } catch (e) {
    // Alias bombs ("billion laughs") and alias cycles end here, not in a stack overflow.
    const message = errorMessage(e);
    throw new MoltError(ErrorCode.FleetInvalid, `${source}: ${message}`, { cause: e });
  }
}

const hints: Partial<Record<ErrorCode, string>> = {
  [ErrorCode.FleetInvalid]: 'fix the field at that line: every object is strict, so look for typos',
  [ErrorCode.UnknownPool]: 'define the pool under `pools:` or fix the name',
  [ErrorCode.UnknownMachine]: 'define the machine under `machines:` or drop it from the rollout',
  [ErrorCode.PolicyInvalid]:
    'fix the policy at that line; docs/adr/0005-operator.md §2–3 has the rules',
  [ErrorCode.KubeFlagInsecure]:
    'remove the flag, or name it in the component’s forceInsecureFlags (docs/kubernetes.md)',
  [ErrorCode.KubeFlagInvalid]: 'a flag value is one line of text',
};
const shownIssues = 10;

export function fleetError(
  code: ErrorCode,
  source: string,
  issues: readonly FleetIssue[],
  extra: { readonly hint?: string | undefined; readonly cause?: unknown } = {},
): MoltError {
  const hint = extra.hint ?? hints[code];
  const lines = issues
    .slice(0, shownIssues)
    .map((i) => `${source}:${i.line}:${i.col}: ${i.path === '' ? '' : `${i.path}: `}${i.message}`);
  if (issues.length > shownIssues) lines.push(`… and ${issues.length - shownIssues} more`);
  return new MoltError(code, lines.join('\n  '), {
    details: { source, issues },
    ...(hint !== undefined && { hint }),
    ...(extra.cause !== undefined && { cause: extra.cause }),
  });
}

/** Turns a path in the parsed value into a line and column of the text. */
export class Locator {
  private readonly doc: Document;
  private readonly lines: LineCounter;

  constructor(doc: Document, lines: LineCounter) {
    this.doc = doc;
    this.lines = lines;
  }

  issue(path: Path, message: string, key?: string): FleetIssue {
    const { line, col } = this.lines.linePos(this.node(path, key)?.range?.[0] ?? 0);
    return { line, col, path: formatPath(path), message };
  }

  /** The deepest node on `path` (a missing field points at its object), or `key`'s own node. */
  private node(path: Path, key: string | undefined): Node | undefined {
    for (let n = path.length; n >= 0; n--) {
      const node: unknown = n === 0 ? this.doc.contents : this.doc.getIn(path.slice(0, n), true);
      if (!isNode(node)) continue;
      const pair =
        key !== undefined && n === path.length && isMap(node)
          ? node.items.find((p) => isScalar(p.key) && String(p.key.value) === key)
          : undefined;
      return isNode(pair?.key) ? pair.key : node;
    }
    return undefined;
  }
}

function pathOf(path: readonly PropertyKey[]): Path {
  return path.filter((p): p is string | number => typeof p !== 'symbol');
}

function formatPath(path: Path): string {
  return path
    .map((p, i) =>
      typeof p === 'number'
        ? `[${p}]`
        : /^[A-Za-z_][\w-]*$/.test(p)
          ? i === 0
            ? p
            : `.${p}`
          : `[${JSON.stringify(p)}]`,
    )
    .join('');
}

/** The one unknown key an issue is about, so the error points at the key rather than its object. */
function keyOf(issue: z.core.$ZodIssue): string | undefined {
  return issue.code === 'unrecognized_keys' ? issue.keys[0] : undefined;
}

function describe(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((k) => `"${k}"`).join(', ');
    return `unknown field${issue.keys.length > 1 ? 's' : ''} ${keys}`;
  }
  if (issue.code === 'invalid_type' && issue.input === undefined) return 'is required';
  return issue.message.replace(/^Invalid (input|option): /, '');
}
