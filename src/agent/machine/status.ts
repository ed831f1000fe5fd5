// SPDX-License-Identifier: Apache-2.0
/** `GET /v1/status`: the machine as the agent sees it, from the state machine, slots and bootloader. */
import { iso } from '../../core/time.ts';
import { SlotIds, type SlotId, type SlotManifest } from '../../core/slots/slot.ts';
import type { UpgradeState } from '../../core/upgrade/state.ts';
import type { AgentStatus, SlotView } from '../../protocol/agent.ts';
import type { HoldView } from '../../protocol/agent-hold.ts';
import type { BootInfo } from '../ports/boot-info.ts';
import type { Bootloader } from '../ports/bootloader.ts';
import type { SlotStore } from '../ports/slot-store.ts';

export interface StatusSources {
  readonly node: string;
  readonly role: 'control-plane' | 'worker';
  readonly boot: BootInfo;
  readonly slots: SlotStore;
  readonly bootloader: Bootloader;
  readonly state: () => UpgradeState;
  /** The machine's hold (null: none). */
  readonly hold: () => HoldView | null;
}

/** Whether `manifest` is the slot a staged upgrade wrote and verified (unarmed: still `writing`). */
function isStaged(state: UpgradeState, slot: SlotId, manifest: SlotManifest): boolean {
  return (
    state.phase === 'Staged' &&
    state.op?.target === slot &&
    manifest.status === 'writing' &&
    manifest.operationId === state.op.id
  );
}

async function slotView(slots: SlotStore, slot: SlotId, state: UpgradeState): Promise<SlotView> {
  const manifest = await slots.manifest(slot);
  if (manifest === undefined)
    return { slot, status: 'empty', version: null, digest: null, generation: null };
  return {
    slot,
    status: isStaged(state, slot, manifest) ? 'staged' : manifest.status,
    version: manifest.version,
    digest: manifest.imageDigest,
    generation: manifest.generation,
    ...(manifest.badReason === undefined ? {} : { badReason: manifest.badReason }),
  };
}

export async function machineStatus(sources: StatusSources): Promise<AgentStatus> {
  const state = sources.state();
  const slots = await Promise.all(SlotIds.map((slot) => slotView(sources.slots, slot, state)));
  const op = state.op;
  const last = state.last;
  return {
    node: sources.node,
    role: sources.role,
    bootId: sources.boot.bootId,
    bootedSlot: sources.boot.slot,
    version: slots.find((s) => s.slot === sources.boot.slot)?.version ?? null,
    slots,
    boot: await sources.bootloader.read(),
    phase: state.phase,
    operation:
      op === undefined
        ? null
        : {
            id: op.id,
            kind: op.kind,
            phase: state.phase,
            ...(op.image === undefined ? {} : { image: op.image }),
            startedAt: iso(op.startedAt),
          },
    last:
      last === undefined
        ? null
        : {
            operationId: last.operationId,
            kind: last.kind,
            result: last.result,
            ...(last.code === undefined ? {} : { code: last.code }),
            ...(last.reason === undefined ? {} : { reason: last.reason }),
            ...(last.message === undefined ? {} : { message: last.message.slice(0, 1000) }),
            finishedAt: iso(last.finishedAt),
          },
    hold: sources.hold(),
  };
}
