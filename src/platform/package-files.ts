// SPDX-License-Identifier: Apache-2.0
/**
 * Files molt ships beside its code (`deploy/kubernetes/*.yaml`, `scripts/ensure-kube-bins.sh`):
 * found from the package root, which is two folders above this module both in a source checkout
 * (`src/platform/`) and in the built package (`dist/platform/`).
 */
import { join } from 'node:path';

/** The root of the molt package (or checkout) this code runs from. */
export const packageRoot = join(import.meta.dirname, '..', '..');

/** A path inside the package, e.g. `packageFile('deploy', 'kubernetes', 'crds.yaml')`. */
export const packageFile = (...parts: string[]): string => join(packageRoot, ...parts);
