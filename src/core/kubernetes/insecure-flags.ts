// SPDX-License-Identifier: Apache-2.0
/**
 * Flags of a component's `extraArgs` that open the cluster's API (docs/adr/0012 §1). Whoever
 * writes a cluster's Kubernetes configuration can already set any API-server flag — that is
 * cluster-admin-equivalent by design — but these few turn off the cluster's authorization as a
 * whole, so a slip (or a copied tutorial) must not apply them silently: each is refused with
 * `MOLT_KUBE_FLAG_INSECURE` unless the component names it in `forceInsecureFlags`.
 *
 * The list is short on purpose — the flags whose one value makes every caller powerful:
 * - `authorization-mode` holding `AlwaysAllow`: every authenticated request is allowed.
 * - `anonymous-auth` true: requests without credentials are served (as `system:anonymous`).
 * - `disable-admission-plugins` holding `NodeRestriction`: a kubelet may then rewrite any Node
 *   and its labels, the fields molt reads a machine's pool and role from.
 * The insecure port (`insecure-port`, `insecure-bind-address`) is gone since 1.24 and refused as a
 * removed flag (`removed-flags.ts`). Flags naming files on the machine (token or authorization
 * files) are not judged: molt cannot see their content.
 *
 * Values are also refused when they hold a control character (`MOLT_KUBE_FLAG_INVALID`): a
 * newline in a unit's `ExecStart=` ends the line, and systemd then refuses the whole unit.
 */
import { ErrorCode, MoltError } from '../errors.ts';
import type { ExtraArgs, KubeComponent } from './types.ts';

/** A flag of a component's configuration that opens the API, and why. */
export interface InsecureFlag {
  readonly flag: string;
  readonly why: string;
}

/** Go's `strconv.ParseBool` true values: what the component itself would read as true. */
const goTrue: ReadonlySet<string> = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);

const listHas = (value: string, item: string): boolean =>
  value.split(',').some((v) => v.trim() === item);

type Judge = (value: string) => string | undefined;

const judges: Readonly<Partial<Record<KubeComponent, Readonly<Record<string, Judge>>>>> = {
  'kube-apiserver': {
    'authorization-mode': (v) =>
      listHas(v, 'AlwaysAllow') ? 'AlwaysAllow authorizes every request' : undefined,
    'anonymous-auth': (v) =>
      goTrue.has(v.trim()) ? 'requests without credentials are served' : undefined,
    'disable-admission-plugins': (v) =>
      listHas(v, 'NodeRestriction')
        ? 'without NodeRestriction a kubelet may rewrite any Node (its pool and role labels)'
        : undefined,
  },
};

/** The flags of `args` that open the API (whether forced or not), by flag name. */
export function insecureFlags(component: KubeComponent, args: ExtraArgs): readonly InsecureFlag[] {
  const own = judges[component] ?? {};
  return Object.keys(args)
    .sort()
    .flatMap((flag) => {
      const why = own[flag]?.(args[flag] ?? '');
      return why === undefined ? [] : [{ flag, why }];
    });
}

/** The refusal of an insecure flag not forced (the schema's message and `MOLT_KUBE_FLAG_INSECURE`). */
export function insecureFlagError(component: KubeComponent, f: InsecureFlag): MoltError {
  return new MoltError(
    ErrorCode.KubeFlagInsecure,
    `--${f.flag} of ${component} opens the API server: ${f.why}`,
    {
      details: { component, flag: f.flag },
      hint: `remove it, or list "${f.flag}" in the component's forceInsecureFlags if the cluster must run so`,
    },
  );
}

/** Control characters (C0, DEL, C1): none belongs in a command-line flag. */
export const controlCharacter = /\p{Cc}/u;

/** @throws MoltError `MOLT_KUBE_FLAG_INVALID` when a flag's name or value holds a control character. */
export function assertPrintableFlags(component: string, args: ExtraArgs): void {
  for (const [flag, value] of Object.entries(args))
    if (controlCharacter.test(flag) || controlCharacter.test(value))
      throw new MoltError(
        ErrorCode.KubeFlagInvalid,
        `extra flag ${JSON.stringify(flag)} of ${component} holds a control character (a newline, a tab …)`,
        { hint: 'a flag value is one line of text; fix the cluster’s extraArgs' },
      );
}
