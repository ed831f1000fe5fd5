// SPDX-License-Identifier: Apache-2.0
/**
 * The molt that tests and benchmarks run as a process: this checkout's sources, through Node's
 * type stripping (no build). The lab takes it as the argv that starts molt; an installed molt
 * starts its lab with its own entry point instead.
 */
import { join } from 'node:path';

export const moltEntry = join(import.meta.dirname, '../bin/molt.ts');

/** `[node, …/src/bin/molt.ts]`. */
export const moltArgv: readonly string[] = [process.execPath, moltEntry];
