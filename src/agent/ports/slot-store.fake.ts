// SPDX-License-Identifier: Apache-2.0
/**
 * In-memory {@link SlotStore} for runner and API tests; passes `testkit/slot-store-conformance.ts`
 * like the file-system adapter. `stage` plays a completed pull, `corrupt` a bit flip on disk.
 * With `partitionBytes` it plays the block-device store: `rootfs.img` lives in a partition of that
 * size, which `stage` (a pull) overwrites, and `pullTargets` names it.
 */
import { createHash } from 'node:crypto';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { artifactPath } from '../../core/slots/layout.ts';
import { checkStagedImage } from '../../core/boot/staged-image.ts';
import { nextGeneration, type StagedRecord } from '../../core/slots/manifest.ts';
import {
  otherSlot,
  type ArtifactName,
  type ArtifactRecord,
  type LabBehaviour,
  type SlotId,
  type SlotManifest,
} from '../../core/slots/slot.ts';
import type { PullTargets, SlotStore, StagedImage } from './slot-store.ts';

/** A pulled image as a test declares it. */
export interface StageInput extends StagedImage {
  readonly lab?: LabBehaviour;
  readonly artifacts: Partial<Record<ArtifactName, Uint8Array>>;
}

type Files = Map<ArtifactName, Uint8Array>;

const digestOf = (bytes: Uint8Array): string =>
  `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

/** The `staged.json` a finished pull of `image` into `slot` leaves (the fake's and `stageOnDisk`'s). */
export function stagedRecordOf(slot: SlotId, image: StageInput, pulledAt: string): StagedRecord {
  const artifacts: StagedRecord['artifacts'] = {};
  for (const [name, bytes] of Object.entries(image.artifacts) as [ArtifactName, Uint8Array][])
    artifacts[name] = { size: bytes.byteLength, digest: digestOf(bytes) };
  const { imageRef, imageDigest, version, lab } = image;
  return {
    schema: 1,
    slot,
    imageRef,
    imageDigest,
    manifestDigest: imageDigest,
    version,
    ...(lab !== undefined && { lab }),
    artifacts,
    pulledAt,
  };
}

export interface FakeSlotStoreOptions {
  /** Keep `rootfs.img` in place, in a partition of this many bytes (the block store). */
  readonly partitionBytes?: number;
}

const tooLarge = (slot: SlotId, size: number, capacity: number): MoltError =>
  new MoltError(
    ErrorCode.ImageTooLarge,
    `rootfs.img is ${size} bytes, larger than the ${capacity}-byte partition of slot ${slot}`,
  );

export class FakeSlotStore implements SlotStore {
  readonly pullTargets?: (slot: SlotId) => Promise<PullTargets>;
  private readonly partitionBytes: number | undefined;
  private readonly manifests = new Map<SlotId, SlotManifest>();
  private readonly files = new Map<SlotId, Files>();
  private readonly stagedImages = new Map<SlotId, StageInput>();
  /** Slots whose manifest is an install still `writing`, and the operation that made it. */
  private readonly installing = new Map<SlotId, string>();
  private readonly now: () => Date;

  constructor(now: () => Date = () => new Date(), options: FakeSlotStoreOptions = {}) {
    this.now = now;
    const capacity = options.partitionBytes;
    this.partitionBytes = capacity;
    if (capacity !== undefined)
      this.pullTargets = (slot) =>
        Promise.resolve({ 'rootfs.img': { path: `fake:${slot}`, offset: 0, capacity } });
  }

  /** Put a completed pull into the slot's staging area (its rootfs into the partition, in place). */
  stage(slot: SlotId, image: StageInput): void {
    this.stagedImages.set(slot, structuredClone(image));
    const rootfs = image.artifacts['rootfs.img'];
    if (this.partitionBytes === undefined || rootfs === undefined) return;
    const files = this.files.get(slot) ?? new Map<ArtifactName, Uint8Array>();
    files.set('rootfs.img', rootfs.slice(0, this.partitionBytes));
    this.files.set(slot, files);
  }

  /** The rootfs of `s` does not fit the partition (in-place stores only). */
  private overflow(slot: SlotId, s: StageInput): MoltError | undefined {
    const size = s.artifacts['rootfs.img']?.byteLength ?? 0;
    const capacity = this.partitionBytes;
    return capacity !== undefined && size > capacity ? tooLarge(slot, size, capacity) : undefined;
  }

  /** Flip a byte of an installed artifact, as a bad disk would. */
  corrupt(slot: SlotId, name: ArtifactName): void {
    const bytes = this.files.get(slot)?.get(name);
    if (bytes !== undefined && bytes.byteLength > 0) bytes[0] = (bytes[0] ?? 0) ^ 0xff;
  }

  manifest(slot: SlotId): Promise<SlotManifest | undefined> {
    return Promise.resolve(this.copy(this.manifests.get(slot)));
  }

  staged(slot: SlotId): Promise<StagedImage | undefined> {
    const s = this.stagedImages.get(slot);
    return Promise.resolve(
      s === undefined || this.overflow(slot, s) !== undefined
        ? undefined
        : { imageRef: s.imageRef, imageDigest: s.imageDigest, version: s.version },
    );
  }

  discardStaged(slot: SlotId): Promise<void> {
    this.stagedImages.delete(slot);
    return Promise.resolve();
  }

  checkStaged(slot: SlotId): Promise<StagedImage> {
    const s = this.stagedImages.get(slot);
    if (s === undefined)
      return Promise.reject(
        new MoltError(ErrorCode.MachineInvalid, `slot ${slot} has no staged image to check`),
      );
    const overflow = this.overflow(slot, s);
    if (overflow !== undefined) return Promise.reject(overflow);
    const record = stagedRecordOf(slot, s, this.now().toISOString());
    const { imageRef, imageDigest, version } = s;
    const cmdline = String.fromCharCode(...(s.artifacts.cmdline ?? []));
    try {
      checkStagedImage({ slot, record, cmdline });
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    return Promise.resolve({ imageRef, imageDigest, version });
  }

  markWriting(slot: SlotId, operationId: string): Promise<void> {
    const m = this.manifests.get(slot);
    if (m !== undefined) this.manifests.set(slot, { ...m, status: 'writing', operationId });
    return Promise.resolve();
  }

  install(slot: SlotId, operationId: string): Promise<SlotManifest> {
    const s = this.stagedImages.get(slot);
    const current = this.manifests.get(slot);
    if (s === undefined) {
      const installed = this.installedBy(slot, operationId);
      if (installed !== undefined) return Promise.resolve(this.copy(installed));
      return Promise.reject(
        new MoltError(ErrorCode.MachineInvalid, `slot ${slot} has no staged image to install`),
      );
    }
    const files: Files = new Map();
    const artifacts: Partial<Record<ArtifactName, ArtifactRecord>> = {};
    for (const [name, bytes] of Object.entries(s.artifacts) as [ArtifactName, Uint8Array][]) {
      // In place, the partition holds what the pull wrote: nothing to move.
      const inPlace = name === 'rootfs.img' && this.partitionBytes !== undefined;
      const there = inPlace ? this.files.get(slot)?.get(name) : undefined;
      files.set(name, there ?? Uint8Array.from(bytes));
      artifacts[name] = {
        path: artifactPath(slot, name),
        size: bytes.byteLength,
        digest: digestOf(bytes),
      };
    }
    const generation = nextGeneration([current, this.manifests.get(otherSlot(slot))]);
    const { imageRef, imageDigest, version, lab } = s;
    const m: SlotManifest = {
      schema: 1,
      slot,
      status: 'writing',
      imageRef,
      imageDigest,
      version,
      generation,
      artifacts,
      ...(lab !== undefined && { lab }),
      operationId,
      writtenAt: this.now().toISOString(),
    };
    this.files.set(slot, files);
    this.manifests.set(slot, m);
    this.installing.set(slot, operationId);
    this.stagedImages.delete(slot);
    return Promise.resolve(this.copy(m));
  }

  verify(slot: SlotId, operationId?: string): Promise<SlotManifest> {
    const m =
      operationId === undefined ? this.manifests.get(slot) : this.installedBy(slot, operationId);
    if (m === undefined || (operationId === undefined && m.status !== 'ready'))
      return Promise.reject(new MoltError(ErrorCode.SlotVerifyFailed, `slot ${slot} is not ready`));
    for (const [name, a] of Object.entries(m.artifacts) as [ArtifactName, ArtifactRecord][]) {
      const bytes = this.files.get(slot)?.get(name);
      if (bytes === undefined || digestOf(bytes) !== a.digest)
        return Promise.reject(
          new MoltError(
            ErrorCode.SlotVerifyFailed,
            `slot ${slot} artifact ${name} does not hash to ${a.digest}`,
          ),
        );
    }
    return Promise.resolve(this.copy(m));
  }

  markReady(slot: SlotId, operationId: string): Promise<SlotManifest> {
    const m = this.installedBy(slot, operationId);
    if (m === undefined)
      return Promise.reject(
        new MoltError(
          ErrorCode.MachineInvalid,
          `slot ${slot} holds no image written by ${operationId}`,
        ),
      );
    const ready: SlotManifest = { ...m, status: 'ready' };
    this.manifests.set(slot, ready);
    this.installing.delete(slot);
    return Promise.resolve(this.copy(ready));
  }

  /** The manifest of the install `operationId` made: `ready`, or `writing` and not yet marked ready. */
  private installedBy(slot: SlotId, operationId: string): SlotManifest | undefined {
    const m = this.manifests.get(slot);
    if (m?.operationId !== operationId) return undefined;
    if (m.status === 'ready') return m;
    return m.status === 'writing' && this.installing.get(slot) === operationId ? m : undefined;
  }

  markBad(slot: SlotId, badReason: string): Promise<void> {
    const m = this.manifests.get(slot);
    if (m !== undefined) this.manifests.set(slot, { ...m, status: 'bad', badReason });
    return Promise.resolve();
  }

  private copy<T>(v: T): T {
    return structuredClone(v);
  }
}
