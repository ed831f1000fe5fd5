// SPDX-License-Identifier: Apache-2.0
/** The answer of `transition` for a (state, event) pair the table does not allow. */
import type { Transition } from './state.ts';

export interface IllegalTransition {
  readonly illegal: true;
  readonly reason: string;
}

export function illegal(reason: string): IllegalTransition {
  return { illegal: true, reason };
}

export function isIllegal(result: Transition | IllegalTransition): result is IllegalTransition {
  return 'illegal' in result;
}
