// SPDX-License-Identifier: Apache-2.0
/**
 * The image policies' metrics (docs/adr/0013 decision 5): `molt_image_gm_missing{policy,digest}`,
 * 1 for a GM digest the registry no longer has, 0 for one it has. A digest that could not be
 * checked (the registry failed) has no sample: an outage is not a lost image, and an alert on
 * `== 1` must not fire for it. Only the leader checks, so a standby exposes the family empty.
 */
import type { GmFinding } from '../images/gm-check.ts';
import { family, sample } from './exposition.ts';

export function imageFamilies(gm: readonly GmFinding[]): string[] {
  return family(
    'molt_image_gm_missing',
    'gauge',
    'GM digests of the image policies: 1 when the registry no longer has one, 0 when it has (none while unknown).',
    gm.flatMap((f) =>
      f.state === 'unknown'
        ? []
        : [
            sample(
              'molt_image_gm_missing',
              { policy: f.policy, digest: f.digest },
              f.state === 'missing' ? 1 : 0,
            ),
          ],
    ),
  );
}
