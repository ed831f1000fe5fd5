// SPDX-License-Identifier: Apache-2.0
/**
 * A pull's in-place artifacts (the slot store's `pullTargets`, docs/adr/0008 §3): where they go,
 * whether they fit, and the once-only `beforeOverwrite` before the first byte reaches a target.
 */
import { constants, openSync } from 'node:fs';
import type { ArtifactPlan } from '../../../core/slots/contract.ts';
import type { ArtifactName } from '../../../core/slots/slot.ts';
import type { InPlaceWrite } from '../../ports/image-source.ts';
import type { ArtifactTarget } from '../../ports/slot-store.ts';
import type { OpenedFile } from './tar-layer.ts';
import { checkFits } from '../fs-slot-store/placement.ts';

export class InPlace {
  private readonly write: InPlaceWrite | undefined;
  private readonly precheck: () => Promise<void>;
  private started: Promise<void> | undefined = undefined;
  /** `precheck` runs right before `beforeOverwrite`: the last checks that can refuse the image. */
  constructor(write: InPlaceWrite | undefined, precheck: () => Promise<void>) {
    this.write = write;
    this.precheck = precheck;
  }

  /** The target of `name`, when it is written in place. */
  target(name: ArtifactName): ArtifactTarget | undefined {
    return this.write?.targets[name];
  }

  /** Names written in place. */
  names(): ArtifactName[] {
    return Object.keys(this.write?.targets ?? {}) as ArtifactName[];
  }

  /**
   * Refuse, before any byte is written, an image whose raw artifacts do not fit their targets
   * (a tar layer's files are only known from their entry headers: `openTarget` checks those).
   */
  checkPlan(plan: ArtifactPlan): void {
    for (const l of plan.layers) {
      const target = l.kind === 'raw' ? this.target(l.artifact) : undefined;
      if (l.kind === 'raw' && target !== undefined) checkFits(l.artifact, l.layer.size, target);
    }
  }

  /** The pre-checks, then `beforeOverwrite` (once per pull); a no-op without targets. */
  overwrite(): Promise<void> {
    const write = this.write;
    if (write === undefined) return Promise.resolve();
    this.started ??= this.precheck().then(() => write.beforeOverwrite());
    return this.started;
  }

  /** Open `target` for an artifact of `size` bytes; `MOLT_IMAGE_TOO_LARGE` before opening it. */
  static openTarget(name: ArtifactName, size: number, target: ArtifactTarget): OpenedFile {
    checkFits(name, size, target);
    // No O_CREAT, no O_TRUNC: a device, or a region of a disk image (write-target.ts).
    return { fd: openSync(target.path, constants.O_WRONLY), position: target.offset };
  }
}
