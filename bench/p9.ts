// SPDX-License-Identifier: Apache-2.0
/**
 * Benchmark P9: one real VM upgrade, request → committed on the new slot. A disk
 * installed with release 1.0.0 by `molt install`'s code, booted by OVMF + GRUB under the product's
 * VM runner (test/vm/harness, TCG here), upgraded to 1.1.0 over the agent's API. The time splits
 * into pull + write, shutdown, boot (firmware, kernel, userspace), agent start and health →
 * commit: boundaries from the serial console (host-timed, bench/p9-clock.ts) and the agent's
 * journal events (guest-timed, brought to host time per boot). Beside it, on their own:
 * - boot_s: a reboot of the same idle machine through its agent (`POST /v1/reboot`: systemd's
 *   reboot, the kernel's reset, OVMF, GRUB — the upgrade's path with nothing written), from the
 *   kernel's "Restarting system" to `MOLT-BOOTED` (multi-user reached): the boot any A/B scheme
 *   pays. (A QMP `system_reset` was tried first: its firmware + GRUB took 2–3× longer than the
 *   guest's own reset, so it is no baseline for the upgrade's boot.)
 * - write_s: the same rootfs blob from the same registry into a partition of a disk image on the
 *   host at `dd` speed (`curl | tee >(sha256sum) | dd oflag=direct conv=fsync iflag=fullblock`,
 *   P5's peer, median of 3).
 * molt's overhead = total − boot_s − write_s. One upgrade (minutes under TCG): one run, no loop.
 * `MOLT_BENCH_KEEP=1` keeps the lab directory (console log, disks).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { connectToAgent } from '../src/cli/commands/node/connection.ts';
import { buildImage } from '../src/image/build/build.ts';
import { parseBuildOptions } from '../src/image/build/options.ts';
import type { Vm } from '../src/lab/vm/vm.ts';
import type { AgentClient } from '../src/protocol/index.ts';
import { makeDiskImage } from '../src/testkit/disk-image.ts';
import { imageCache, type OsRelease } from '../test/vm/harness/os-release.ts';
import { repository, SlotBytes, startVmLab } from '../test/vm/harness/real-machine.ts';
import { followEvents, watchSerial, type SerialClock } from './p9-clock.ts';
import { p9Report, type Boot, type Upgrade } from './p9-report.ts';

const run = promisify(execFile);
const repoRoot = join(import.meta.dirname, '..');
const MiB = 1024 * 1024;

const Firmware = /BdsDxe: loading/;
const Booted = /MOLT-BOOTED slot=(\S+) version=(\S+) boot=\S+ uptime=([\d.]+)/;
const Listening = /molt agent: \S+ booted slot \S+, listening on/;
const Restarting = /reboot: Restarting system/;
const BootDeadlineMs = 300_000;

/** Release `version` built by `molt image build`'s code into `out` (base and molt from the shared cache). */
async function release(version: string, out: string): Promise<OsRelease> {
  const options = parseBuildOptions(
    ['--version', version, '--out', out, '--cache', imageCache],
    process.env,
  );
  if (options === null) throw new Error('unreachable: no --help');
  const summary = await buildImage(options, () => undefined);
  const artifacts: Record<string, Uint8Array> = {};
  for (const name of ['vmlinuz', 'initrd.img', 'rootfs.img'])
    artifacts[name] = await readFile(join(out, name));
  artifacts['cmdline'] = new TextEncoder().encode(summary.cmdline);
  return { version, dir: out, artifacts };
}

/** A boot that began at `start` (host time), read off the console after byte `from`. */
async function bootAfter(vm: Vm, serial: SerialClock, from: number, start: number): Promise<Boot> {
  const fw = await vm.waitFor(Firmware, { from, deadlineMs: BootDeadlineMs });
  const booted = await vm.waitFor(Booted, { from: fw.index, deadlineMs: BootDeadlineMs });
  const up = await vm.waitFor(Listening, { from: fw.index, deadlineMs: BootDeadlineMs });
  // A line counts once its last byte is on the console.
  const bootedAt = serial.at(booted.index + booted[0].length - 1);
  return {
    start,
    firmware: serial.at(fw.index),
    kernel: bootedAt - Number(booted[3]) * 1000,
    booted: bootedAt,
    listening: serial.at(up.index + up[0].length - 1),
  };
}

/**
 * One operation of the agent that reboots the machine: asked at `request`, its events followed to
 * the result, the boot it went through read off the console (from the kernel's "Restarting
 * system", else OVMF's first line).
 */
async function observe(
  vm: Vm,
  serial: SerialClock,
  ask: () => Promise<{ operationId: string }>,
  client: AgentClient,
): Promise<Upgrade> {
  const from = await vm.serialSize();
  const request = Date.now();
  const { operationId } = await ask();
  const { events, drops } = await followEvents(client, operationId, BootDeadlineMs);
  const result = events.at(-1)?.event.result?.result;
  if (result !== 'Succeeded') throw new Error(`operation ${operationId}: ${String(result)}`);
  const restart = await serial.find(Restarting, from);
  const boot = await bootAfter(vm, serial, restart?.end ?? from, 0);
  return { request, events, drops, boot: { ...boot, start: restart?.at ?? boot.firmware } };
}

/** The rootfs blob from the registry into a partition of a disk image at `dd` speed (ms, median of 3). */
async function hostWrite(dir: string, url: string): Promise<number> {
  const disk = await makeDiskImage(join(dir, 'dd-disk.img'), SlotBytes / MiB);
  const script = [
    'set -o pipefail',
    'curl -sf "$1" | tee >(sha256sum > "$2") |',
    '  dd of="$3" seek="$4" oflag=seek_bytes,direct conv=fsync,notrunc bs=4M iflag=fullblock status=none',
    'wait $!',
  ].join('\n');
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    const args = [url, join(dir, 'dd.sha256'), disk.path, String(disk.slots.B.offset)];
    await run('bash', ['-c', script, 'bash', ...args]);
    times.push(performance.now() - started);
  }
  await rm(disk.path, { force: true });
  return [...times].sort((a, b) => a - b)[1] ?? Number.NaN;
}

const loadavg = async (): Promise<string> =>
  (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');

/** Run P9 and print its phase table and `BENCH P9 …` line. */
export async function runP9(): Promise<void> {
  const dir = await mkdtemp(join(repoRoot, '.molt', 'p9-'));
  const lab = await startVmLab(dir);
  const loadBefore = await loadavg();
  let serial: SerialClock | undefined;
  try {
    const r1 = await release('1.0.0', join(dir, 'releases', '1.0.0'));
    const r11 = await release('1.1.0', join(dir, 'releases', '1.1.0'));
    const v1 = await lab.publish('1.0.0', r1);
    const v11 = await lab.publish('1.1.0', r11);
    const m = await lab.machine('p9', 'grub', v1);
    serial = watchSerial(m.vm.serialLog);
    const first = await m.booted(0, BootDeadlineMs);
    await m.vm.waitFor(Listening, { from: 0, deadlineMs: BootDeadlineMs });
    await m.status();

    const rootfs = r11.artifacts['rootfs.img'] ?? new Uint8Array();
    const digest = `sha256:${createHash('sha256').update(rootfs).digest('hex')}`;
    const writeMs = await hostWrite(dir, `${lab.registry.url}/v2/${repository}/blobs/${digest}`);

    const admin = join(dir, 'admin');
    const conn = await connectToAgent(
      {
        endpoint: m.endpoint,
        ca: join(admin, 'ca.pem'),
        cert: join(admin, 'admin.pem'),
        key: join(admin, 'admin.key'),
        timeout: 15_000,
      },
      {},
    );
    try {
      // The boot on its own: a reboot of the idle machine through its agent, the same path
      // (systemd's reboot, the kernel's reset, OVMF, GRUB) as the upgrade's, with nothing written.
      const reboot = await observe(m.vm, serial, () => conn.client.reboot({}), conn.client);
      const upgrade = await observe(
        m.vm,
        serial,
        () => conn.client.upgrade({ image: v11 }),
        conn.client,
      );
      const result = upgrade.events.at(-1)?.event.result?.result;
      const now = await m.status();
      if (result !== 'Succeeded' || now.bootedSlot !== 'B' || now.boot.committed !== 'B')
        throw new Error(`the upgrade did not commit B: ${String(result)} ${JSON.stringify(now)}`);
      const notes = [
        `P9: one upgrade 1.0.0 → 1.1.0 of a real VM (${m.vm.accel.toUpperCase()}, 1 vCPU, 1 GiB; OVMF + GRUB; ${SlotBytes / MiB} MiB slots; rootfs.img ${(rootfs.byteLength / MiB).toFixed(1)} MiB squashfs) from docker-registry on the host's loopback; first boot ${first.slot}/${first.version}`,
        `cores: ${String(availableParallelism())}; load average before ${loadBefore}, after ${await loadavg()}; one run (an upgrade takes minutes under TCG)`,
      ];
      const report = p9Report({
        upgrade,
        reboot,
        writeMs,
        notes,
      });
      process.stdout.write(`${report.lines.join('\n')}\n${report.bench}\n`);
    } finally {
      await conn.close();
    }
  } finally {
    serial?.stop();
    await lab.stop();
    if (process.env['MOLT_BENCH_KEEP'] !== '1') await rm(dir, { recursive: true, force: true });
    else process.stdout.write(`kept ${dir}\n`);
  }
}
