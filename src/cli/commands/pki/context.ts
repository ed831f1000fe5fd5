// SPDX-License-Identifier: Apache-2.0
/**
 * `molt pki issue --context NAME [--operator URL]`: the certificate just issued becomes a context
 * of the CLI config (docs/adr/0010) — its operator from `--operator`, or the URL the context
 * already has — so the person it was issued to needs no environment variables. It becomes the
 * current context only when none is.
 */
import { resolve } from 'node:path';
import { ErrorCode, MoltError } from '../../../protocol/index.ts';
import { CliContext, setContext } from '../../../protocol/cli-config.ts';
import { loadCliConfig, updateCliConfig } from '../../../platform/config/cli-config-file.ts';
import type { CliEnv } from '../../flags.ts';

/** What was written, for the output. */
export interface SavedContext {
  readonly name: string;
  readonly file: string;
  readonly operator: string;
  readonly current: boolean;
}

/** The operator URL context `name` will have; checked before anything is issued. */
export async function contextOperator(
  env: CliEnv,
  name: string,
  operator: string | undefined,
): Promise<string> {
  // Read first: a broken config file is reported before a certificate is issued, not after.
  const known = (await loadCliConfig(env)).config.contexts[name]?.operator;
  if (operator !== undefined) {
    const url = CliContext.shape.operator.safeParse(operator);
    if (!url.success)
      throw new MoltError(ErrorCode.BadFlag, `--operator ${operator}: must be an https:// URL`);
    return operator;
  }
  if (known !== undefined) return known;
  throw new MoltError(ErrorCode.BadFlag, `--context ${name} needs --operator URL`, {
    hint: `there is no context ${name} yet to take the operator’s URL from`,
  });
}

/** Store context `name` with the issued certificate, its key and the fleet CA. */
export async function saveIssuedContext(
  env: CliEnv,
  o: { name: string; operator: string; cert: string; key: string; caDir: string },
): Promise<SavedContext> {
  const fields = {
    operator: o.operator,
    cert: resolve(o.cert),
    key: resolve(o.key),
    ca: resolve(o.caDir, 'ca.pem'),
  };
  const { path, config } = await updateCliConfig(env, (c) => {
    const next = setContext(c, o.name, fields, 'molt pki issue --help');
    return next.currentContext === undefined ? { ...next, currentContext: o.name } : next;
  });
  return {
    name: o.name,
    file: path,
    operator: o.operator,
    current: config.currentContext === o.name,
  };
}
