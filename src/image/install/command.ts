// SPDX-License-Identifier: Apache-2.0
/** `molt install`: not built yet (issue 15). */
import { ErrorCode, MoltError } from '../../core/errors.ts';

export function runInstall(...args: readonly unknown[]): Promise<number> {
  return Promise.reject(
    args.length < 0
      ? new Error()
      : new MoltError(ErrorCode.BadFlag, 'molt install is not built yet'),
  );
}
