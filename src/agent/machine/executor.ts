// SPDX-License-Identifier: Apache-2.0
/**
 * Executes the state machine's commands against the ports. Each handler is idempotent (the runner
 * runs a persisted command list again after a crash) and either returns an outcome or throws a
 * MoltError the machine turns into `StepFailed`. Steps a machine has no port for (the lease on a
 * worker, Kubernetes outside a cluster) are `skipped`, never silently done.
 */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { Command, CommandType } from '../../core/upgrade/commands.ts';
import type { CommandOutcome } from '../../core/upgrade/events.ts';
import type { Operation } from '../../core/upgrade/state.ts';
import type { KubeOutcome } from '../ports/kube-node.ts';
import type { InPlaceWrite, PullProgress, ResolvedImage } from '../ports/image-source.ts';
import type { SlotId } from '../../core/slots/slot.ts';
import { waitHealthy } from './health.ts';
import { checkReleaseKubelet } from './kubelet-skew.ts';
import type { MachinePorts } from './ports.ts';
import { etcdBeforeDisruption } from './etcd-retry.ts';

export { EtcdStepAttempts } from './etcd-retry.ts';

export interface ExecutionContext {
  readonly op: Operation | undefined;
  log(message: string): void;
  progress(progress: PullProgress): void;
  /** Aborts a step that can stop midway (the pull): a cancel, or the pull deadline. */
  readonly signal?: AbortSignal;
}

type Handler<T extends CommandType> = (
  command: Extract<Command, { type: T }>,
  ports: MachinePorts,
  ctx: ExecutionContext,
) => Promise<CommandOutcome>;

type Handlers = { [T in CommandType]: Handler<T> };

const done = (command: CommandType, data?: CommandOutcome['data']): CommandOutcome =>
  data === undefined ? { command, outcome: 'done' } : { command, outcome: 'done', data };
const skipped = (command: CommandType, reason: string): CommandOutcome => ({
  command,
  outcome: 'skipped',
  reason,
});
const fromKube = (command: CommandType, outcome: KubeOutcome): CommandOutcome =>
  outcome.status === 'done' ? done(command) : skipped(command, outcome.reason);
const notControlPlane = 'not a control-plane machine';

function opId(ctx: ExecutionContext): string {
  if (ctx.op === undefined)
    throw new MoltError(ErrorCode.Internal, 'a step ran without an operation');
  return ctx.op.id;
}

/**
 * The slot becomes unbootable: manifest first, so a crash in between leaves a `writing` slot with
 * its entry (never armed nor committed here), never a `ready` slot without one that a rollback
 * would take. From here on no boot can pick the slot, so its bytes may change. Idempotent.
 */
async function markUnbootable(slot: SlotId, p: MachinePorts, operationId: string): Promise<void> {
  await p.slots.markWriting(slot, operationId);
  await p.bootloader.removeEntry(slot);
}

/**
 * The pull's in-place part, for a slot store that keeps artifacts in the slot itself (docs/adr/0008
 * §3): the pull overwrites the slot, so the image source makes it unbootable (what
 * MarkSlotUnbootable does at WritingSlot for staged stores) once every check that needs no bytes
 * passed, and before the first byte. WritingSlot's MarkSlotUnbootable then finds it done.
 */
async function inPlaceWrite(
  c: Extract<Command, { type: 'PullImage' }>,
  p: MachinePorts,
  ctx: ExecutionContext,
): Promise<InPlaceWrite | undefined> {
  const targets = await p.slots.pullTargets?.(c.slot);
  if (targets === undefined) return undefined;
  const operationId = opId(ctx);
  return {
    targets,
    beforeOverwrite: async () => {
      ctx.log(`slot ${c.slot} is overwritten by the pull: marked unbootable first`);
      await markUnbootable(c.slot, p, operationId);
    },
  };
}

/**
 * Refuses a pull of the image the booted slot already runs: the upgrade would cordon,
 * drain and reboot for nothing, and leave both slots on one release — no fallback. `force` allows it.
 */
function sameImageGuard(
  c: Extract<Command, { type: 'PullImage' }>,
  p: MachinePorts,
): ((image: ResolvedImage) => Promise<void>) | undefined {
  if (c.force) return undefined;
  const booted = c.slot === 'A' ? 'B' : 'A';
  return async (image) => {
    const running = await p.slots.manifest(booted);
    if (running?.status !== 'ready' || running.imageDigest !== image.digest) return;
    throw new MoltError(
      ErrorCode.AlreadyRunning,
      `slot ${booted} already runs ${running.version} (${image.digest}); nothing to upgrade`,
      {
        hint: 'an upgrade to the same image would leave no other release to fall back to; an admin can force it (--force)',
      },
    );
  };
}

const handlers: Handlers = {
  async PullImage(c, p, ctx) {
    const inPlace = await inPlaceWrite(c, p, ctx);
    const guard = sameImageGuard(c, p);
    const staged = await p.images.pull(c.image, c.slot, {
      // Before the pull writes anything; `force` lifts the same-image refusal, never the skew.
      checkResolved: async (image) => {
        await guard?.(image);
        await checkReleaseKubelet(p.kube, image);
      },
      onProgress: (progress) => {
        ctx.progress(progress);
      },
      ...(ctx.signal !== undefined && { signal: ctx.signal }),
      ...(inPlace !== undefined && { inPlace }),
    });
    return done(c.type, { pulled: { digest: staged.imageDigest, version: staged.version } });
  },
  async CheckStagedImage(c, p) {
    await p.slots.checkStaged(c.slot);
    return done(c.type);
  },
  async VerifyRollbackTarget(c, p) {
    const manifest = await p.slots.manifest(c.slot);
    if (manifest?.status !== 'ready') {
      throw new MoltError(
        ErrorCode.NoValidSlot,
        `slot ${c.slot} holds no valid image (${manifest?.status ?? 'empty'})`,
        {
          hint: 'a rollback needs the other slot to hold a verified image',
        },
      );
    }
    // Everything the rollback will boot, checked before the first disruption: bytes, then entry.
    await p.bootloader.checkEntry(c.slot, await p.slots.verify(c.slot));
    return done(c.type);
  },
  async AcquireLease(c, p, ctx) {
    const lease = p.lease;
    if (lease === undefined) return skipped(c.type, notControlPlane);
    await etcdBeforeDisruption(p, ctx, 'taking the upgrade lease', () =>
      lease.acquire(c.operationId),
    );
    return done(c.type);
  },
  async CheckQuorum(c, p, ctx) {
    const etcd = p.etcd;
    if (etcd === undefined) return skipped(c.type, notControlPlane);
    const report = await etcdBeforeDisruption(p, ctx, 'checking quorum', () =>
      etcd.checkQuorum({ preserve: c.preserve, force: c.force }),
    );
    if (!report.ok) {
      const code =
        report.code === ErrorCode.EtcdUnhealthy ? ErrorCode.EtcdUnhealthy : ErrorCode.QuorumAtRisk;
      throw new MoltError(code, report.reason ?? 'etcd quorum is at risk');
    }
    // A 1- or 2-member cluster allowed to go down (preserve, or its downtime accepted).
    return report.members.length < 3 ? done(c.type, { etcdDown: true }) : done(c.type);
  },
  Cordon: async (c, p) => fromKube(c.type, await p.kube.cordon(c.operationId)),
  Drain: async (c, p) => fromKube(c.type, await p.kube.drain(c.operationId, c.policy)),
  Uncordon: async (c, p) => fromKube(c.type, await p.kube.uncordon(c.operationId)),
  async StopServices(c, p) {
    await p.services.stopAll();
    return done(c.type);
  },
  async StartServices(c, p) {
    await p.services.startAll();
    return done(c.type);
  },
  async LeaveEtcd(c, p) {
    if (p.etcd === undefined) return skipped(c.type, notControlPlane);
    await p.etcd.leave();
    return done(c.type);
  },
  async RejoinEtcd(c, p) {
    if (p.etcd === undefined) return skipped(c.type, notControlPlane);
    await p.etcd.rejoin({ asNewMember: c.asNewMember });
    return done(c.type);
  },
  async ReleaseMounts(c, p) {
    await p.mounts.release();
    return done(c.type);
  },
  async MountEphemeral(c, p) {
    await p.mounts.mount();
    return done(c.type);
  },
  async WipeEphemeral(c, p) {
    await p.mounts.wipe(c.operationId);
    return done(c.type);
  },
  async MarkSlotUnbootable(c, p, ctx) {
    await markUnbootable(c.slot, p, opId(ctx));
    return done(c.type);
  },
  async WriteSlot(c, p) {
    await p.slots.install(c.slot, c.operationId);
    return done(c.type);
  },
  async VerifySlot(c, p) {
    await p.slots.verify(c.slot, c.operationId);
    return done(c.type);
  },
  async WriteBootEntry(c, p) {
    // VerifySlot just re-hashed this install; MarkSlotReady, next, checks it is still this one.
    const manifest = await p.slots.manifest(c.slot);
    if (manifest?.operationId !== c.operationId || manifest.status === 'bad')
      throw new MoltError(
        ErrorCode.MachineInvalid,
        `slot ${c.slot} holds no image written by operation ${c.operationId}`,
      );
    await p.bootloader.writeEntry(c.slot, manifest);
    return done(c.type);
  },
  async MarkSlotReady(c, p) {
    await p.slots.markReady(c.slot, c.operationId);
    return done(c.type);
  },
  async ArmBootOnce(c, p) {
    const manifest = await p.slots.manifest(c.slot);
    if (manifest?.status !== 'ready') {
      throw new MoltError(
        ErrorCode.NoValidSlot,
        `slot ${c.slot} is not ready to boot (${manifest?.status ?? 'empty'})`,
      );
    }
    // The entry exists (WriteBootEntry, or checked by VerifyRollbackTarget): the entry point is written last.
    await p.bootloader.armBootOnce(c.slot);
    return done(c.type);
  },
  async DisarmBootOnce(c, p) {
    await p.bootloader.disarmBootOnce();
    return done(c.type);
  },
  async ExtendLeaseForReboot(c, p) {
    if (p.lease === undefined) return skipped(c.type, notControlPlane);
    return done(c.type, { leaseId: await p.lease.extendForReboot(c.operationId) });
  },
  async Reboot(c, p, ctx) {
    ctx.log('rebooting');
    return p.power.reboot(`operation ${ctx.op?.id ?? '-'}: ${c.type}`);
  },
  async RunHealthChecks(c, p, ctx) {
    let last = '';
    await waitHealthy(p.health, p.clock, c.deadline, (results) => {
      const line = results.map((r) => `${r.name}: ${r.status}`).join(', ');
      if (line !== last) ctx.log(`health: ${line}`);
      last = line;
    });
    return done(c.type);
  },
  async Commit(c, p) {
    await p.bootloader.commit(c.slot);
    return done(c.type);
  },
  async MarkSlotBad(c, p) {
    await p.bootloader.markBad(c.slot);
    await p.slots.markBad(c.slot, c.reason);
    return done(c.type);
  },
  async ReleaseLease(c, p) {
    if (p.lease === undefined) return skipped(c.type, notControlPlane);
    await p.lease.release(c.operationId);
    return done(c.type);
  },
  async DiscardPull(c, p) {
    await p.slots.discardStaged(c.slot);
    return done(c.type);
  },
};

export function execute(
  command: Command,
  ports: MachinePorts,
  ctx: ExecutionContext,
): Promise<CommandOutcome> {
  const handler = handlers[command.type] as Handler<typeof command.type>;
  return handler(command, ports, ctx);
}
