// SPDX-License-Identifier: Apache-2.0
/**
 * Policies are data, validated at the edge (ADR 0005 §3): anything the planner could not enforce
 * is refused with `MOLT_POLICY_INVALID` and the path of the offending field
 * as written (`pools[1].policies[0].window.windows[0].cron`), before any rollout runs under it.
 */
import { Cron } from 'croner';
import { ErrorCode, errorMessage, MoltError } from '../errors.ts';
import { MAX_DURATION_MS } from '../time.ts';
import type { Machine, Policy, PolicyKind, Pool, Window } from './types.ts';

/** Kinds a policy list may hold once: two of them would contradict each other. */
const SINGLE: ReadonlySet<PolicyKind> = new Set<PolicyKind>([
  'canary',
  'batches',
  'machine-soak',
  'zones',
  'control-plane-first',
  'failure-budget',
]);

function invalid(path: string, message: string): MoltError {
  return new MoltError(ErrorCode.PolicyInvalid, `${path}: ${message}`, {
    details: { path },
    hint: 'fix the policy in the fleet file; see docs/adr/0005-operator.md §2 for the rules',
  });
}

const isCount = (n: number): boolean => Number.isInteger(n) && n >= 1;
const isDuration = (n: number, min: number): boolean => n >= min && n <= MAX_DURATION_MS;

function requireCount(n: number, path: string): void {
  if (!isCount(n)) throw invalid(path, `must be a whole number of at least 1, got ${n}`);
}

function requireDuration(n: number, path: string, positive: boolean): void {
  if (!isDuration(n, positive ? Number.MIN_VALUE : 0)) {
    const least = positive ? 'above' : 'of at least';
    throw invalid(path, `must be a duration ${least} 0 ms and at most 100 years, got ${n}`);
  }
}

function requireZone(timeZone: string, path: string): void {
  try {
    new Cron('0 0 * * *', { paused: true, timezone: timeZone }).nextRun(new Date(0));
  } catch (cause) {
    throw new MoltError(ErrorCode.PolicyInvalid, `${path}: unknown time zone '${timeZone}'`, {
      cause,
      details: { path },
      hint: 'use an IANA zone name such as Europe/Berlin or UTC',
    });
  }
}

function requireCron(w: Window, path: string): void {
  let fires: Date | null;
  try {
    fires = new Cron(w.cron, { paused: true, timezone: w.timeZone ?? 'UTC' }).nextRun(new Date(0));
  } catch (cause) {
    const reason = errorMessage(cause);
    throw new MoltError(ErrorCode.PolicyInvalid, `${path}: invalid cron '${w.cron}': ${reason}`, {
      cause,
      details: { path },
    });
  }
  if (fires === null) throw invalid(path, `cron '${w.cron}' never fires`);
}

function validateWindow(w: Window, path: string): void {
  requireDuration(w.durationMs, `${path}.duration`, true);
  if (w.timeZone !== undefined) requireZone(w.timeZone, `${path}.timeZone`);
  requireCron(w, `${path}.cron`);
}

/** A reference instant for the "never closes" test (any fixed date works; this keeps it stable). */
const REFERENCE = new Date(Date.UTC(2026, 0, 1));
const FIRES_CHECKED = 400;

/**
 * An exclusion whose every occurrence lasts until the next fire (a fire every 15 minutes, open for 20) is
 * always open: no start could ever happen, and finding the next opening would walk every fire.
 */
function requireCloses(w: Window, path: string): void {
  const fires = new Cron(w.cron, { paused: true, timezone: w.timeZone ?? 'UTC' })
    .nextRuns(FIRES_CHECKED, REFERENCE)
    .map((d) => d.getTime());
  if (fires.length < FIRES_CHECKED) return;
  const closes = fires.some((f, i) => i > 0 && f - (fires[i - 1] ?? f) > w.durationMs);
  if (!closes)
    throw invalid(
      `${path}.duration`,
      'the exclusion never closes: each occurrence lasts until the next one',
    );
}

/** What a policy is checked against: the machines of its scope (pool or fleet). */
interface Scope {
  readonly name: string;
  readonly machines: readonly Machine[];
}

function validateLimit(p: Extract<Policy, { kind: 'concurrency' }>, path: string): void {
  if ('count' in p.limit) {
    requireCount(p.limit.count, path);
    return;
  }
  const pct = p.limit.percent;
  if (!(Number.isFinite(pct) && pct > 0 && pct <= 100)) {
    throw invalid(path, `must be above 0 and at most 100, got ${pct}`);
  }
}

function validateWindows(p: Extract<Policy, { kind: 'window' }>, path: string): void {
  if (p.windows.length === 0) throw invalid(`${path}.windows`, 'needs at least one window');
  p.windows.forEach((w, i) => {
    validateWindow(w, `${path}.windows[${i}]`);
  });
  (p.exclusions ?? []).forEach((w, i) => {
    validateWindow(w, `${path}.exclusions[${i}]`);
    requireCloses(w, `${path}.exclusions[${i}]`);
  });
}

function validateCanary(p: Extract<Policy, { kind: 'canary' }>, path: string, s: Scope): void {
  requireCount(p.count, `${path}.count`);
  requireDuration(p.soakMs, `${path}.soak`, false);
  const size = s.machines.length;
  if (size > 0 && p.count > size) {
    throw invalid(`${path}.count`, `${p.count} canaries, but ${s.name} has only ${size} machines`);
  }
}

function validateZones(p: Extract<Policy, { kind: 'zones' }>, path: string, s: Scope): void {
  if (p.label.trim() === '') throw invalid(`${path}.label`, 'needs a label name');
  if (s.machines.length > 0 && !s.machines.some((m) => p.label in m.labels)) {
    throw invalid(`${path}.label`, `no machine of ${s.name} has the label '${p.label}'`);
  }
}

/**
 * Each kind's key as a fleet file or Pool object writes it: a path names the field a person typed
 * (`policies[0].window.windows[0].cron`), not core's shape of it.
 */
const writtenKey: Readonly<Record<PolicyKind, string>> = {
  concurrency: 'concurrency',
  rate: 'rate',
  window: 'window',
  canary: 'canary',
  batches: 'batches',
  'machine-soak': 'machineSoak',
  zones: 'zones',
  'control-plane-first': 'controlPlaneFirst',
  'failure-budget': 'failureBudget',
  gate: 'gate',
};

function validatePolicy(p: Policy, item: string, scope: Scope): void {
  const path = `${item}.${writtenKey[p.kind]}`;
  switch (p.kind) {
    case 'concurrency':
      validateLimit(p, path);
      break;
    case 'rate':
      requireCount(p.count, `${path}.count`);
      requireDuration(p.periodMs, `${path}.per`, true);
      break;
    case 'window':
      validateWindows(p, path);
      break;
    case 'canary':
      validateCanary(p, path, scope);
      break;
    case 'batches':
      requireDuration(p.soakMs, `${path}.soak`, false);
      break;
    case 'machine-soak':
      requireDuration(p.soakMs, path, false);
      break;
    case 'zones':
      validateZones(p, path, scope);
      break;
    case 'control-plane-first':
      break;
    case 'failure-budget':
      requireCount(p.maxFailed, path);
      break;
    case 'gate':
      validateGate(p, path);
      break;
  }
}

/** A gate is checked with an HTTP GET: an http(s) URL, a real status code, a positive timeout. */
function validateGate(p: Extract<Policy, { kind: 'gate' }>, path: string): void {
  if (p.name.trim() === '') throw invalid(`${path}.name`, 'a gate needs a name');
  if (!/^https?:\/\/[^\s/]+/.test(p.url))
    throw invalid(`${path}.url`, `'${p.url}' is not an http:// or https:// URL`);
  const status = p.expectStatus ?? 200;
  if (!Number.isInteger(status) || status < 100 || status > 599)
    throw invalid(`${path}.expectStatus`, `${String(status)} is not an HTTP status`);
  if (p.timeoutMs !== undefined) requireDuration(p.timeoutMs, `${path}.timeout`, true);
}

function validateList(policies: readonly Policy[], path: string, scope: Scope): void {
  const seen = new Map<PolicyKind, number>();
  const gateNames = new Set<string>();
  policies.forEach((p, i) => {
    const first = seen.get(p.kind);
    if (first !== undefined && SINGLE.has(p.kind)) {
      throw invalid(`${path}[${i}]`, `a second ${p.kind} policy contradicts ${path}[${first}]`);
    }
    seen.set(p.kind, i);
    validatePolicy(p, `${path}[${i}]`, scope);
    if (p.kind === 'gate' && gateNames.has(p.name))
      throw invalid(`${path}[${i}].gate.name`, `a second gate named ${p.name}`);
    if (p.kind === 'gate') gateNames.add(p.name);
  });
}

/**
 * Throws `MOLT_POLICY_INVALID` for the first policy the planner could not enforce. Pool policies
 * are checked against the pool's machines, fleet policies against the whole fleet.
 */
export function validatePolicies(
  pools: readonly Pool[],
  fleetPolicies: readonly Policy[],
  machines: readonly Machine[],
): void {
  pools.forEach((pool, i) => {
    const members = machines.filter((m) => m.pool === pool.name);
    validateList(pool.policies, `pools[${i}].policies`, {
      name: `pool ${pool.name}`,
      machines: members,
    });
  });
  validateList(fleetPolicies, 'fleetPolicies', { name: 'the fleet', machines });
  validatePromotion(pools);
  pools.forEach(validateStrategy);
}

/**
 * A replace pool needs a provider; an HTTP provider is an http(s) URL without user-info, with a
 * positive timeout (Cluster API has nothing to check here: the operator config must name its management cluster).
 */
function validateStrategy(pool: Pool, i: number): void {
  const at = `pools[${String(i)}]`;
  if (pool.provider === undefined) {
    if (pool.strategy === 'replace')
      throw invalid(`${at}.provider`, `pool ${pool.name} replaces machines but has no provider`);
    return;
  }
  if ('capi' in pool.provider) return;
  if (!/^https?:\/\/[^\s/]+/.test(pool.provider.url))
    throw invalid(`${at}.provider.url`, `'${pool.provider.url}' is not an http:// or https:// URL`);
  // molt sends no credentials to a provider, and its address is quoted in errors.
  if (/^[a-z]+:\/\/[^/?#]*@/i.test(pool.provider.url))
    throw invalid(`${at}.provider.url`, 'must not carry a user or password (user:password@)');
  if (pool.provider.timeoutMs !== undefined)
    requireDuration(pool.provider.timeoutMs, `${at}.provider.timeoutMs`, true);
}

/** `promoteFrom` names another pool, and following the chain never comes back (no cycle). */
function validatePromotion(pools: readonly Pool[]): void {
  const byName = new Map(pools.map((p) => [p.name, p]));
  pools.forEach((pool, i) => {
    if (pool.promoteFrom === undefined) return;
    const at = `pools[${String(i)}].promoteFrom`;
    if (!byName.has(pool.promoteFrom))
      throw invalid(at, `pool ${pool.name} promotes from ${pool.promoteFrom}, which is not a pool`);
    const seen = new Set([pool.name]);
    for (
      let p = byName.get(pool.promoteFrom);
      p !== undefined;
      p = byName.get(p.promoteFrom ?? '')
    ) {
      if (seen.has(p.name))
        throw invalid(at, `promotion from ${pool.promoteFrom} comes back to ${p.name}: a cycle`);
      seen.add(p.name);
    }
  });
}
