// SPDX-License-Identifier: Apache-2.0
/** Small formatting helpers for the sentences in plan decisions (durations: ../time.ts). */

/** `1 machine`, `3 machines`. */
export const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
