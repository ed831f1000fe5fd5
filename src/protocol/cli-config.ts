// SPDX-License-Identifier: Apache-2.0
/**
 * The CLI's config file (docs/adr/0010): named contexts, each an operator and the client
 * certificate that reaches it, like kubectl's kubeconfig or talosctl's talosconfig. `molt config`,
 * `molt lab up` and `molt pki issue --context` write it; every command that connects reads it.
 * Shared here so the CLI and the lab agree on one shape; reading and writing the file is
 * `platform/config/cli-config-file.ts`.
 */
import { z } from 'zod';
import { ErrorCode, MoltError } from '../core/errors.ts';

/** A context's name: a word a shell needs no quotes for. */
export const ContextName = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._@-]{0,62}$/,
    'must be 1-63 letters, digits, dots, dashes, underscores or @',
  );

const absolutePath = z
  .string()
  .min(2)
  .refine((p) => p.startsWith('/'), 'must be an absolute path');

/** One context: where the operator is and which certificate speaks to it (and to agents). */
export const CliContext = z.strictObject({
  /** The operator API, `https://host:port`. */
  operator: z.url({ protocol: /^https$/, message: 'must be an https:// URL' }),
  /** Client certificate, its private key and the fleet CA: PEM files, absolute paths. */
  cert: absolutePath,
  key: absolutePath,
  ca: absolutePath,
  /** The default of `-o` for commands that connect. */
  output: z.enum(['table', 'json', 'yaml']).optional(),
  /**
   * Reach a machine named on the command line (`molt node status cp-1`) at this port of the
   * host its inventory endpoint names, when the operator reaches agents at another port than
   * this workstation does (a port forward, a load balancer).
   */
  agentPort: z.number().int().min(1).max(65535).optional(),
  /**
   * The release registry and repository `molt releases …` read when no flag or variable names
   * them, and whether it is plain HTTP (a lab's loopback registry).
   */
  registry: z.string().min(1).max(300).optional(),
  repository: z.string().min(1).max(300).optional(),
  insecure: z.boolean().optional(),
});
export type CliContext = z.infer<typeof CliContext>;

/** The whole file. */
export const CliConfig = z.strictObject({
  /** The context used when no `--context` is given. */
  currentContext: ContextName.optional(),
  contexts: z.record(ContextName, CliContext).default({}),
});
export type CliConfig = z.infer<typeof CliConfig>;

/** An empty config: what a missing file means. */
export const emptyCliConfig = (): CliConfig => ({ contexts: {} });

/** The context names, sorted. */
export const contextNames = (c: CliConfig): string[] => Object.keys(c.contexts).sort();

/** `name` with `fields` set (merged over what it had); refuses a new context missing a field. */
export function setContext(
  c: CliConfig,
  name: string,
  fields: Partial<CliContext>,
  source: string,
): CliConfig {
  const merged = { ...c.contexts[name], ...fields };
  const parsed = CliContext.safeParse(merged);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.map(String).join('.') ?? '';
    const missing =
      issue?.code === 'invalid_type' && merged[field as keyof CliContext] === undefined;
    throw new MoltError(
      ErrorCode.BadFlag,
      `context ${name}: ${field} ${missing ? 'is required' : (issue?.message ?? 'is invalid')}`,
      { hint: `a new context needs --operator, --cert, --key and --ca (${source})` },
    );
  }
  return { ...c, contexts: { ...c.contexts, [name]: parsed.data } };
}

/** `c` without context `name`; the current context too when it was that one. */
export function deleteContext(c: CliConfig, name: string): CliConfig {
  const contexts = Object.fromEntries(Object.entries(c.contexts).filter(([n]) => n !== name));
  if (c.currentContext !== name) return { ...c, contexts };
  return { contexts };
}

/** The context called `name`, or MOLT_UNKNOWN_CONTEXT listing the ones `file` has. */
export function requireContext(c: CliConfig, name: string, file: string): CliContext {
  const found = c.contexts[name];
  if (found !== undefined) return found;
  const known = contextNames(c);
  throw new MoltError(
    ErrorCode.UnknownContext,
    `no context ${name} in ${file}; ${known.length === 0 ? 'it has none' : `it has: ${known.join(', ')}`}`,
    {
      hint:
        known.length === 0
          ? 'create one: `molt config set-context NAME --operator URL --cert … --key … --ca …` (`molt lab up` writes one named lab)'
          : 'list them with `molt config get-contexts`',
    },
  );
}
