// SPDX-License-Identifier: Apache-2.0
/**
 * Rendering a control-plane component (docs/adr/0012 §3): from the machine's own facts for it (its
 * base flags — files, ports, etcd endpoints — port and environment), what the cluster asks for (an
 * apply: version, bundle, emulated version, extra flags) and the directory its binary is in, the
 * exact process to run and a hash of it. The agent restarts a component only when its hash
 * changes, so everything that changes the process is in the hash — the binary's path included,
 * which names the bundle's digest (`<state>/kubernetes/<digest hex>/`), so a new bundle of the same
 * version still restarts it.
 *
 * The machine's flags win: an extra flag that would override one of them (its etcd endpoints, its
 * certificates, its port) is refused with `MOLT_BAD_INPUT` naming the flag, before anything moves.
 * A flag holding a control character is refused too (`MOLT_KUBE_FLAG_INVALID`): the API's schema
 * already refuses one, and a unit a newline reached would not start at all.
 */
import { ErrorCode, MoltError } from '../errors.ts';
import { assertPrintableFlags } from './insecure-flags.ts';

/** What the machine itself says about one component (its machine config). */
export interface ComponentFacts {
  /** Its base flags, `--flag=value` or `--flag`, in order. */
  readonly args: readonly string[];
  /** The secure port it serves `/readyz` or `/healthz` on. */
  readonly port: number;
  readonly env: Readonly<Record<string, string>>;
}

/** What the cluster asks a component to run (the agent API's `ComponentApplyBody`). */
export interface ComponentApply {
  readonly version: string;
  readonly bundle: string;
  /** `1.35`: run as that minor (KEP-4330 `--emulated-version`). */
  readonly emulatedVersion?: string | undefined;
  readonly extraArgs: Readonly<Record<string, string>>;
}

/** One component as a process: what the supervisor runs and the hash that says whether it changed. */
export interface ComponentSpec {
  readonly name: string;
  readonly binary: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly port: number;
  /** Hex sha256 of the canonical form of everything above. */
  readonly hash: string;
}

export interface RenderInput {
  readonly name: string;
  readonly facts: ComponentFacts;
  /** Absent: the machine config's initial component (its initial binaries, no extra flags). */
  readonly apply?: ComponentApply | undefined;
  /** Directory holding the binary: a staged bundle's, or the machine's initial one. */
  readonly binDir: string;
  /** Hex sha256 of a UTF-8 string (core has no crypto of its own). */
  readonly sha256: (text: string) => string;
}

/** Flags molt sets from the apply body's own fields; an extra flag may not set them. */
const reserved: Readonly<Record<string, string>> = {
  'emulated-version': 'set emulatedVersion instead',
};

/** `--etcd-servers=a` → `etcd-servers`; undefined for something that is not a flag. */
export function flagName(arg: string): string | undefined {
  return /^--([a-z0-9][a-z0-9-]*)(?:=|$)/.exec(arg)?.[1];
}

function extraFlags(name: string, facts: ComponentFacts, extra: ComponentApply['extraArgs']) {
  assertPrintableFlags(name, extra);
  const own = new Set(facts.args.map(flagName));
  const keys = Object.keys(extra).sort();
  for (const key of keys) {
    if (own.has(key))
      throw new MoltError(
        ErrorCode.BadInput,
        `extra flag --${key} of ${name} would override the flag this machine sets itself`,
        { hint: `remove ${key} from the component's extraArgs; the machine config owns it` },
      );
    const why = reserved[key];
    if (why !== undefined)
      throw new MoltError(ErrorCode.BadInput, `extra flag --${key} of ${name}: ${why}`);
  }
  return keys.map((k) => `--${k}=${extra[k] ?? ''}`);
}

/** The canonical text the hash is taken of: fixed field order, environment sorted by name. */
export function canonicalForm(spec: Omit<ComponentSpec, 'hash'>): string {
  const env = Object.keys(spec.env)
    .sort()
    .map((k) => [k, spec.env[k] ?? '']);
  return JSON.stringify([spec.name, spec.binary, spec.args, env, spec.port]);
}

/**
 * Render one component; see the module comment.
 * @throws MoltError `MOLT_BAD_INPUT`, `MOLT_KUBE_FLAG_INVALID`
 */
export function renderComponent(input: RenderInput): ComponentSpec {
  const { name, facts, apply } = input;
  const emulated =
    apply?.emulatedVersion === undefined
      ? []
      : [`--emulated-version=kube=${apply.emulatedVersion}`];
  const spec = {
    name,
    binary: `${input.binDir.replace(/\/+$/, '')}/${name}`,
    args: [...facts.args, ...emulated, ...extraFlags(name, facts, apply?.extraArgs ?? {})],
    env: Object.fromEntries(
      Object.keys(facts.env)
        .sort()
        .map((k) => [k, facts.env[k] ?? '']),
    ),
    port: facts.port,
  };
  return { ...spec, hash: input.sha256(canonicalForm(spec)) };
}
