// SPDX-License-Identifier: Apache-2.0
/** Reading a PEM file a person named (a flag, a config field): unreadable is `MOLT_PKI_INVALID`. */
import { readFile } from 'node:fs/promises';
import { ErrorCode, MoltError } from '../../protocol/index.ts';

/** The text of `path`; `what` names it in the error (`certificate`, `the API key`). */
export async function readPem(path: string, what: string, hint?: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    throw new MoltError(
      ErrorCode.PkiInvalid,
      `cannot read ${what} ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`,
      { cause: e, ...(hint !== undefined && { hint }) },
    );
  }
}
