// SPDX-License-Identifier: Apache-2.0
/**
 * The `lab` context of the CLI config (docs/adr/0010): `molt lab up` writes it — the lab's
 * operator and the lab person's admin certificate `molt lab env` points at — and makes it current unless
 * another context is, so `molt rollout list` reaches the lab with no environment variables.
 * `molt lab down` removes it again (only if it still points into that lab's directory): a context
 * whose operator is gone would turn every command into an unreachable-operator error, and the next
 * `lab up` writes it afresh anyway, as kind and minikube do with their kubeconfig entries.
 */
import { join, resolve, sep } from 'node:path';
import { isMoltError } from '../core/errors.ts';
import { deleteContext, setContext } from '../protocol/cli-config.ts';
import {
  loadCliConfig,
  updateCliConfig,
  type ConfigEnv,
} from '../platform/config/cli-config-file.ts';
import { signInLine, type LabState } from './state.ts';
import { LabAdmin } from './fleet/operator-pki.ts';

/** The context's name. */
export const labContextName = 'lab';

/** What `lab up` did with the context (shown in its output). */
export type LabContextNote =
  | {
      readonly written: true;
      readonly file: string;
      readonly current: boolean;
      readonly other?: string;
    }
  | { readonly written: false; readonly error: string };

/** Write (or replace) the `lab` context for `state`; a failure is reported, never fatal. */
export async function saveLabContext(state: LabState, env: ConfigEnv): Promise<LabContextNote> {
  const pki = resolve(state.pki);
  const fields = {
    operator: state.operator.api,
    cert: join(pki, LabAdmin.cert),
    key: join(pki, LabAdmin.key),
    ca: join(pki, 'ca.pem'),
    // `molt releases list` reads the lab's registry with no flag: plain HTTP on the lab's address.
    registry: state.registry,
    repository: state.repository,
    insecure: true,
  };
  try {
    let other: string | undefined;
    const { path, config } = await updateCliConfig(env, (c) => {
      const next = setContext(c, labContextName, fields, 'molt lab up');
      const current = c.currentContext;
      const keep = current !== undefined && current !== labContextName && current in c.contexts;
      other = keep ? current : undefined;
      return keep ? next : { ...next, currentContext: labContextName };
    });
    return {
      written: true,
      file: path,
      current: config.currentContext === labContextName,
      ...(other !== undefined && { other }),
    };
  } catch (e) {
    if (!isMoltError(e)) throw e;
    return { written: false, error: `${e.code}: ${e.message}` };
  }
}

/** What `molt lab up` prints once the lab is ready. */
export function describeLabUp(lab: LabState & { readonly context: LabContextNote }): string {
  const machine = lab.machines[0]?.id ?? 'cp-1';
  const signIn = signInLine(lab);
  return (
    `lab ready: dashboard ${lab.operator.dashboard}\n` +
    (signIn === undefined ? '' : `          ${signIn}\n`) +
    describeLabContext(lab.context) +
    `explore:  molt rollout list; molt machine list; molt node status ${machine}; molt history; molt lab status; molt lab down\n`
  );
}

/** The context's line of `lab up`'s output. */
function describeLabContext(n: LabContextNote): string {
  if (!n.written) return `context:  not written (${n.error}); use eval "$(molt lab env)" instead\n`;
  return n.current
    ? `context:  ${labContextName} in ${n.file}, the current one: molt talks to this lab without environment variables\n`
    : `context:  ${labContextName} in ${n.file}; ${n.other ?? 'another'} stays current (molt config use-context ${labContextName}, or --context ${labContextName})\n`;
}

/** Remove the `lab` context if it points into the lab at `dir`; the config file it was in, if so. */
export async function removeLabContext(dir: string, env: ConfigEnv): Promise<string | undefined> {
  const inLab = (path: string | undefined): boolean =>
    path !== undefined && path.startsWith(resolve(dir) + sep);
  try {
    const { config } = await loadCliConfig(env);
    if (!inLab(config.contexts[labContextName]?.cert)) return undefined;
    const { path } = await updateCliConfig(env, (c) => deleteContext(c, labContextName));
    return path;
  } catch (e) {
    if (isMoltError(e)) return undefined;
    throw e;
  }
}
