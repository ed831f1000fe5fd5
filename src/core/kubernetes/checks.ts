// SPDX-License-Identifier: Apache-2.0
/**
 * The checks a Kubernetes plan passes before anything moves (docs/adr/0012 §4, §7), as a named
 * list (STYLE §6, Talos's `check/default.go`) each with its verdict: the path, the bundle, every
 * control-plane machine's release, the flags the target removed, the removed APIs still in use,
 * etcd's health. The first failing check, in that order, is the refusal and its stable code.
 */
import { ErrorCode } from '../errors.ts';
import { parseKubernetesVersion, parseRange } from '../releases/eligibility.ts';
import { describeApi, removedApisInUse } from './deprecated-apis.ts';
import { checkPath, type PathVerdict } from './path.ts';
import { removedFlagsIn } from './removed-flags.ts';
import type { ControlPlaneMachine, ExtraArgs, KubeCheck, KubeComponent } from './types.ts';
import { minorOf } from './version.ts';

/** The release a control-plane machine boots, as discovery knows it. */
export interface MachineRelease {
  readonly machine: string;
  /** The release's version; undefined when the machine's digest is not a known release. */
  readonly version?: string;
  /** Its `dev.molt.kubernetes` range; undefined: it declares none (admits any). */
  readonly kubernetes?: string;
}

export interface CheckInput {
  readonly machines: readonly ControlPlaneMachine[];
  readonly target: {
    readonly version: string;
    readonly extraArgs: Readonly<Partial<Record<KubeComponent, ExtraArgs>>>;
  };
  /** The bundle `<repository>:<version>` resolved to, or undefined when the registry has none. */
  readonly bundle: string | undefined;
  readonly bundleName: string;
  readonly releases: readonly MachineRelease[];
  /** The API server's `/metrics`; undefined when the operator cannot read them (no kubeconfig). */
  readonly metrics: string | undefined;
  readonly etcd: { readonly healthy: boolean; readonly message: string };
}

/** A failed check, as the error it is. */
export interface CheckRefusal {
  readonly code: ErrorCode;
  readonly message: string;
  readonly hint?: string;
}

export interface CheckResult {
  readonly checks: readonly KubeCheck[];
  readonly path: PathVerdict;
  readonly refusal?: CheckRefusal;
}

const pass = (name: string, message: string): KubeCheck => ({ name, ok: true, message });
const fail = (name: string, message: string): KubeCheck => ({ name, ok: false, message });

function releaseCheck(input: CheckInput): [KubeCheck, CheckRefusal?] {
  const version = parseKubernetesVersion(input.target.version);
  const refused = input.releases.filter((r) => {
    if (r.version === undefined) return true;
    if (r.kubernetes === undefined) return false;
    return parseRange(r.kubernetes)?.test(version) !== true;
  });
  if (refused.length === 0)
    return [
      pass('releases', `every control-plane machine's release admits ${input.target.version}`),
    ];
  const why = refused
    .map((r) =>
      r.version === undefined
        ? `${r.machine} boots no release discovery knows`
        : `${r.machine}'s release ${r.version} supports Kubernetes ${r.kubernetes ?? ''}`,
    )
    .join('; ');
  const message = `${input.target.version} is not admitted: ${why}`;
  return [
    fail('releases', message),
    {
      code: ErrorCode.KubeReleaseIncompatible,
      message,
      hint: 'upgrade those machines to a release whose dev.molt.kubernetes range admits the target first',
    },
  ];
}

function flagCheck(input: CheckInput): [KubeCheck, CheckRefusal?] {
  const removed = removedFlagsIn(input.target.extraArgs, minorOf(input.target.version));
  if (removed.length === 0) return [pass('flags', 'no flag of the configuration was removed')];
  const list = removed.map((f) => `${f.component} --${f.flag} (removed in ${f.removedIn})`);
  const message = `${input.target.version} removed flags the configuration sets: ${list.join(', ')}`;
  return [
    fail('flags', message),
    { code: ErrorCode.KubeFlagRemoved, message, hint: 'drop them from extraArgs' },
  ];
}

function apiCheck(input: CheckInput): [KubeCheck, CheckRefusal?] {
  if (input.metrics === undefined)
    return [pass('removed-apis', 'not checked: the operator reads no cluster (no kubeconfig)')];
  const inUse = removedApisInUse(input.metrics, minorOf(input.target.version));
  if (inUse.length === 0)
    return [pass('removed-apis', 'no client requests an API the target removed')];
  const message = `clients still request APIs ${input.target.version} removed: ${inUse.map(describeApi).join(', ')}`;
  return [
    fail('removed-apis', message),
    {
      code: ErrorCode.KubeRemovedApiInUse,
      message,
      hint: 'move those clients to the APIs that replace them (the API server counts requests since it started)',
    },
  ];
}

function pathCheck(path: PathVerdict, target: string): [KubeCheck, CheckRefusal?] {
  if (path.ok)
    return [
      pass(
        'path',
        `${path.from.version} → ${target} (${path.move}${path.emulatedVersion === undefined ? '' : `, emulating ${path.emulatedVersion}`})`,
      ),
    ];
  return [
    fail('path', path.reason),
    { code: path.code, message: path.reason, ...(path.hint !== undefined && { hint: path.hint }) },
  ];
}

function bundleCheck(input: CheckInput): [KubeCheck, CheckRefusal?] {
  if (input.bundle !== undefined) return [pass('bundle', `${input.bundleName} is ${input.bundle}`)];
  const message = `the registry has no Kubernetes bundle ${input.bundleName}`;
  return [
    fail('bundle', message),
    {
      code: ErrorCode.KubeBundleNotFound,
      message,
      hint: 'publish it (molt dev publish-kubernetes) or choose a version that has one',
    },
  ];
}

function etcdCheck(input: CheckInput): [KubeCheck, CheckRefusal?] {
  if (input.etcd.healthy) return [pass('etcd', input.etcd.message)];
  return [
    fail('etcd', input.etcd.message),
    { code: ErrorCode.EtcdUnhealthy, message: `etcd is not healthy: ${input.etcd.message}` },
  ];
}

/** Every check, and the first refusal. */
export function runChecks(input: CheckInput): CheckResult {
  const path = checkPath(input.machines, input.target.version);
  const results = [
    pathCheck(path, input.target.version),
    bundleCheck(input),
    releaseCheck(input),
    flagCheck(input),
    apiCheck(input),
    etcdCheck(input),
  ];
  const refusal = results.find(([, r]) => r !== undefined)?.[1];
  return { checks: results.map(([c]) => c), path, ...(refusal !== undefined && { refusal }) };
}
