// SPDX-License-Identifier: Apache-2.0
/**
 * Reading the machine's own configuration, `state/config.yaml` (schema: protocol/machine-config.ts)
 * at start: a malformed file stops the agent with `MOLT_MACHINE_INVALID` and the path of the bad
 * field, before anything is touched; a file holding the registry password that group or others
 * can read stops it with `MOLT_SECRET_EXPOSED`, rather than run with the secret leaked.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ErrorCode, MoltError } from '../core/errors.ts';
import { MachineConfig } from '../protocol/machine-config.ts';
import { assertPrivate } from '../platform/fs/private-file.ts';
import { withheldCredentials } from './adapters/oci-image-source/config-options.ts';

export function configPath(root: string): string {
  return join(root, 'state', 'config.yaml');
}

export async function loadMachineConfig(root: string): Promise<MachineConfig> {
  const path = configPath(root);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new MoltError(
      ErrorCode.MachineInvalid,
      `cannot read the machine config ${path}: ${(error as Error).message}`,
      {
        hint: 'is --root the machine root? `molt lab machine` creates one',
        cause: error,
      },
    );
  }
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (error) {
    throw new MoltError(
      ErrorCode.MachineInvalid,
      `${path} is not valid YAML: ${(error as Error).message}`,
      { cause: error },
    );
  }
  const parsed = MachineConfig.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where =
      issue === undefined ? '' : `${issue.path.join('.') || '(top level)'}: ${issue.message}`;
    throw new MoltError(ErrorCode.MachineInvalid, `${path} is invalid: ${where}`, {
      hint: 'fix the field named, then start the agent again',
    });
  }
  if (parsed.data.registry.password !== undefined)
    await assertPrivate(path, 'the registry password (registry.password)');
  return parsed.data;
}

/**
 * What the agent starts with but the owner should fix: lines for its log at start. Registry
 * credentials that name no registry are sent to none (a config from before `registry.host`).
 */
export function machineConfigWarnings(config: MachineConfig): string[] {
  const withheld = withheldCredentials(config.registry);
  return withheld === undefined
    ? []
    : [`warning: the registry credentials are sent to no registry: ${withheld}`];
}
