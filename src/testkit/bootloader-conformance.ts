// SPDX-License-Identifier: Apache-2.0
/**
 * One behaviour for every `Bootloader` (docs/adr/0004 §4), run against the fake and both real
 * adapters. A subject may also say what the firmware boots (`boot`, which makes the firmware's
 * own writes) and expose its files (`snapshot`, which must not change when a call is repeated:
 * "compare before writing").
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../core/errors.ts';
import type { SlotId, SlotManifest } from '../core/slots/slot.ts';
import type { Bootloader } from '../agent/ports/bootloader.ts';
import type { BootView } from '../protocol/agent.ts';

export interface BootloaderSubject {
  readonly bootloader: Bootloader;
  /** One power-on: the slot the firmware boots (null: none), with its writes applied. */
  readonly boot?: () => Promise<SlotId | null>;
  /** Files and their identity (inode, mtime): unchanged by a repeated call. */
  readonly snapshot?: () => Promise<string>;
  readonly cleanup?: () => Promise<void>;
}

/** A ready manifest for `slot` (kernel + initramfs on the ESP, no cmdline). */
export function testManifest(
  slot: SlotId,
  generation: number,
  version = `1.${generation}.0`,
): SlotManifest {
  const dir = slot.toLowerCase();
  const artifact = (name: string): { path: string; size: number; digest: string } => ({
    path: `esp/molt/${dir}/${name}`,
    size: 1,
    digest: `sha256:${'0'.repeat(64)}`,
  });
  return {
    schema: 1,
    slot,
    status: 'ready',
    imageRef: `registry.test/molt:${version}`,
    imageDigest: `sha256:${'1'.repeat(64)}`,
    version,
    generation,
    artifacts: {
      vmlinuz: artifact('vmlinuz'),
      'initrd.img': artifact('initrd.img'),
      'rootfs.img': {
        path: `slots/${dir}/rootfs.img`,
        size: 1,
        digest: `sha256:${'2'.repeat(64)}`,
      },
    },
    operationId: `op-${generation}`,
    writtenAt: '2026-11-22T00:00:00.000Z',
  };
}

/** A temp machine root whose ESP holds both slots' kernel and initramfs (so firmware models list them). */
export async function bootloaderTestRoot(): Promise<{ root: string; remove: () => Promise<void> }> {
  const root = await mkdtemp(join(tmpdir(), 'molt-boot-'));
  for (const dir of ['a', 'b']) {
    await mkdir(join(root, 'esp', 'molt', dir), { recursive: true });
    await writeFile(join(root, 'esp', 'molt', dir, 'vmlinuz'), `kernel ${dir}`);
    await writeFile(join(root, 'esp', 'molt', dir, 'initrd.img'), `initrd ${dir}`);
  }
  return { root, remove: () => rm(root, { recursive: true, force: true }) };
}

/** Every file under `dir` with its inode, size and mtime: equal snapshots mean nothing was rewritten. */
export async function fileSnapshot(dir: string): Promise<string> {
  const lines: string[] = [];
  const walk = async (d: string): Promise<void> => {
    let names: string[];
    try {
      names = (await readdir(d)).sort();
    } catch {
      return;
    }
    for (const n of names) {
      const s = await stat(join(d, n), { bigint: true });
      if (s.isDirectory()) await walk(join(d, n));
      else
        lines.push(`${relative(dir, join(d, n))} ino=${s.ino} size=${s.size} mtime=${s.mtimeNs}`);
    }
  };
  await walk(dir);
  return lines.join('\n');
}

const summary = (v: BootView): string =>
  `committed=${String(v.committed)} oneShot=${String(v.oneShot)} ${v.entries.map((e) => `${e.slot}:${e.state}`).join(',')}`;

/** A committed on A (generation 1), B written (generation 2). */
async function installed(b: Bootloader): Promise<void> {
  await b.writeEntry('A', testManifest('A', 1));
  await b.commit('A');
  await b.writeEntry('B', testManifest('B', 2));
}

export function bootloaderConformance(name: string, make: () => Promise<BootloaderSubject>): void {
  const withSubject = (title: string, body: (s: BootloaderSubject) => Promise<void>): void => {
    it(title, async () => {
      const subject = await make();
      try {
        await body(subject);
      } finally {
        await subject.cleanup?.();
      }
    });
  };

  describe(`Bootloader conformance: ${name}`, () => {
    withSubject('starts empty, then commits the first slot', async ({ bootloader: b }) => {
      assert.equal(summary(await b.read()), 'committed=null oneShot=null ');
      await installed(b);
      assert.equal(summary(await b.read()), 'committed=A oneShot=null A:committed,B:bootable');
    });

    withSubject(
      'arms, disarms and re-arms a boot-once without touching the committed slot',
      async ({ bootloader: b }) => {
        await installed(b);
        await b.armBootOnce('B');
        assert.equal(summary(await b.read()), 'committed=A oneShot=B A:committed,B:trial');
        await b.disarmBootOnce();
        assert.equal(summary(await b.read()), 'committed=A oneShot=null A:committed,B:bootable');
        await b.armBootOnce('B');
        assert.equal((await b.read()).oneShot, 'B');
      },
    );

    withSubject(
      'commits the trial, then rolls back to the older slot by boot-once and commit',
      async ({ bootloader: b }) => {
        await installed(b);
        await b.armBootOnce('B');
        await b.commit('B');
        assert.equal(summary(await b.read()), 'committed=B oneShot=null A:bootable,B:committed');
        await b.armBootOnce('A');
        assert.equal((await b.read()).oneShot, 'A');
        await b.commit('A');
        assert.equal(summary(await b.read()), 'committed=A oneShot=null A:committed,B:bootable');
      },
    );

    withSubject(
      'removes and marks bad: the entry disappears, with its boot-once',
      async ({ bootloader: b }) => {
        await installed(b);
        await b.armBootOnce('B');
        await b.markBad('B');
        assert.equal(summary(await b.read()), 'committed=A oneShot=null A:committed');
        await b.removeEntry('B');
        await b.writeEntry('B', testManifest('B', 3));
        await b.removeEntry('B');
        assert.equal(summary(await b.read()), 'committed=A oneShot=null A:committed');
      },
    );

    withSubject('refuses to arm or commit a slot without an entry', async ({ bootloader: b }) => {
      await b.writeEntry('A', testManifest('A', 1));
      await b.commit('A');
      const invalid = (e: unknown): boolean => isMoltError(e, ErrorCode.BootloaderInvalid);
      await assert.rejects(() => b.armBootOnce('B'), invalid);
      await assert.rejects(() => b.commit('B'), invalid);
    });

    withSubject(
      "checks a slot's entry without writing: missing, or booting another kernel, is refused",
      async (s) => {
        const b = s.bootloader;
        const invalid = (e: unknown): boolean => isMoltError(e, ErrorCode.BootloaderInvalid);
        await assert.rejects(() => b.checkEntry('B', testManifest('B', 2)), invalid);
        await installed(b);
        await b.armBootOnce('B');
        const files = await s.snapshot?.();
        await b.checkEntry('B', testManifest('B', 2));
        await b.checkEntry('A', testManifest('A', 1));
        const m = testManifest('B', 2);
        const { vmlinuz, 'rootfs.img': rootfs } = m.artifacts;
        const elsewhere: SlotManifest = {
          ...m,
          artifacts: { ...(vmlinuz && { vmlinuz }), ...(rootfs && { 'rootfs.img': rootfs }) },
        };
        await assert.rejects(() => b.checkEntry('B', elsewhere), invalid);
        assert.equal(await s.snapshot?.(), files, 'a check writes nothing');
        await b.removeEntry('B');
        await assert.rejects(() => b.checkEntry('B', m), invalid);
      },
    );

    withSubject(
      'repeating any call changes nothing (idempotent, compare before write)',
      async (s) => {
        const b = s.bootloader;
        await installed(b);
        const steps: (() => Promise<void>)[] = [
          () => b.writeEntry('B', testManifest('B', 2)),
          () => b.armBootOnce('B'),
          () => b.disarmBootOnce(),
          () => b.armBootOnce('B'),
          () => b.commit('B'),
          () => b.markBad('A'),
          () => b.removeEntry('A'),
        ];
        for (const step of steps) {
          await step();
          const view = summary(await b.read());
          const files = await s.snapshot?.();
          await step();
          assert.equal(summary(await b.read()), view);
          assert.equal(await s.snapshot?.(), files);
        }
      },
    );

    withSubject(
      'the firmware boots the trial once, then the committed slot; a commit sticks',
      async (s) => {
        const boot = s.boot;
        if (boot === undefined) return;
        const b = s.bootloader;
        await installed(b);
        assert.equal(await boot(), 'A');
        await b.armBootOnce('B');
        assert.equal(await boot(), 'B');
        assert.equal(await boot(), 'A', 'an uncommitted trial does not boot twice');
        await b.armBootOnce('B');
        assert.equal(await boot(), 'B');
        await b.commit('B');
        assert.equal(await boot(), 'B');
        assert.equal(await boot(), 'B');
        await b.armBootOnce('A');
        assert.equal(await boot(), 'A', 'a rollback to the older slot boots it once');
        await b.commit('A');
        assert.equal(await boot(), 'A');
        await b.markBad('B');
        await b.armBootOnce('A');
        assert.equal(await boot(), 'A');
      },
    );
  });
}
