// SPDX-License-Identifier: Apache-2.0
/**
 * ImagePolicy objects (docs/adr/0013): the policies in force, and each object's verdict with what
 * it follows and the GM checks' findings as conditions.
 */
import type { ImagePolicy } from '../../../core/images/types.ts';
import { declaredImages } from '../../decide/declared-named.ts';
import { withFollowingConditions } from '../../images/following-status.ts';
import { withGmConditions } from '../../images/gm-status.ts';
import type { DeclaredController, DeclaredDeps } from './controller.ts';

export function imageController(d: DeclaredDeps): DeclaredController {
  let lastAccepted = new Map<string, ImagePolicy>();
  return {
    apply(pass) {
      const images = declaredImages({
        objects: pass.declared.images ?? [],
        file: d.fileImages ?? [],
        lastAccepted,
      });
      lastAccepted = new Map(images.accepted);
      d.setImages?.([...images.specs.values()]);
      const following =
        d.selection === undefined
          ? images.verdicts
          : withFollowingConditions(images.verdicts, images.accepted, d.selection());
      return Promise.resolve(withGmConditions(following, images.accepted, d.gm?.findings()));
    },
  };
}
