// SPDX-License-Identifier: Apache-2.0
/**
 * `molt image build` makes an image that boots (docs/image.md): built through the CLI with an
 * overlay, laid onto a molt disk (GPT by partition name, slot A raw, STATE with a machine config
 * and a node certificate), booted by QEMU straight into the image's kernel and initramfs with
 * `root=PARTLABEL=molt-a`. The serial console must show the watchdog armed by the initramfs,
 * systemd at multi-user, the partitions mounted where docs/real-machines.md §2 says, the boot
 * marker with slot A and the version, and molt's agent listening. A boot that hangs in the
 * initramfs (`break=premount`) must be reset by the i6300esb watchdog. The root is opened through
 * dm-verity with the root hash of the image's cmdline; one byte changed in the slot's squashfs
 * (where squashfs itself would not look at mount) must stop the boot: the kernel panics, and
 * booted through OVMF it leaves its log in an EFI variable that the next boot's systemd-pstore
 * archives for the agent. Slow (a cold build takes
 * minutes, each boot about a minute under TCG): not part of `npm test`; needs root.
 * `MOLT_TEST_IMAGE_FLAGS="--compression xz"` adds build flags (to compare boots).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFile, chmod, copyFile, mkdir, open, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { OvmfVarsTemplate } from '../../src/lab/vm/qemu-args.ts';
import { createCa, issueCertificate } from '../../src/platform/pki/certificates.ts';
import { tempDir } from '../../src/platform/process/managed-process.ts';
import { makeDisk, partitions, type DiskLayout } from './harness/disk.ts';
import { bootVm, slotCmdline, timeTo } from './harness/direct-boot.ts';
import { TamperedByte } from './harness/os-release.ts';

const repo = resolve(import.meta.dirname, '../..');
const Version = '1.1.0';
const BootDeadlineMs = 300_000;
const Layout: DiskLayout = { espMiB: 64, slotMiB: 512, stateMiB: 64, ephemeralMiB: 128 };
const notRoot = process.getuid?.() !== 0 && 'molt image build needs root';

/** A unit the overlay brings: prints the mounts, the machine root's links and failed units. */
const reportUnit = `[Unit]
Description=molt test report
After=multi-user.target molt-booted.service

[Service]
Type=oneshot
ExecStart=/bin/sh -c 'echo "MOLT-TEST-MOUNTS $(findmnt -rn -o TARGET,FSTYPE | paste -sd,)"'
ExecStart=/bin/sh -c 'echo "MOLT-TEST-LINKS slots=$(readlink /molt/slots) run=$(readlink /molt/run)"'
ExecStart=/bin/sh -c 'echo "MOLT-TEST-ROOT $(findmnt -rn -o SOURCE /) $(veritysetup status molt-root | sed -n "s/^ *status: *//p")"'
ExecStart=/bin/sh -c 'echo "MOLT-TEST-PSTORE [$(grep -rhao "Kernel panic - not syncing: [^<]*" /var/lib/systemd/pstore | head -n 1)]"'
ExecStart=/bin/sh -c 'echo "MOLT-TEST-FAILED [$(systemctl --failed --no-legend --plain | cut -d" " -f1 | xargs)]"'
StandardOutput=journal+console

[Install]
WantedBy=multi-user.target
`;

function molt(
  args: readonly string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [join(repo, 'src/bin/molt.ts'), ...args], { cwd: repo });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('close', (code) => {
      done({ code, stdout, stderr });
    });
  });
}

/** `MOLT_TEST_CONSOLE=FILE` keeps the serial consoles of the boots (appended) for a look. */
async function keepConsole(text: string): Promise<void> {
  const file = process.env['MOLT_TEST_CONSOLE'];
  if (file !== undefined) await appendFile(file, `${text}\n---- end of boot ----\n`);
}

async function stateDir(dir: string): Promise<void> {
  await mkdir(join(dir, 'pki'), { recursive: true, mode: 0o700 });
  await mkdir(join(dir, 'slots'), { recursive: true });
  const config = { node: 'vm-1', role: 'worker', bootloader: 'grub', disk: {} };
  await writeFile(join(dir, 'config.yaml'), stringify(config));
  const ca = await createCa();
  const node = await issueCertificate({ ca, role: 'node', name: 'vm-1' });
  await writeFile(join(dir, 'pki', 'ca.pem'), ca.cert);
  await writeFile(join(dir, 'pki', 'node.pem'), node.cert);
  await writeFile(join(dir, 'pki', 'node.key'), node.key, { mode: 0o600 });
  await chmod(join(dir, 'pki', 'node.key'), 0o600);
}

describe('molt image build: an image that boots', { skip: notRoot }, () => {
  let work: { path: string; remove: () => Promise<void> };
  let out: string;
  let disk: string;
  let cmdline: string;

  before(async () => {
    work = await tempDir('vm-image');
    const overlay = join(work.path, 'overlay');
    await mkdir(join(overlay, 'etc/systemd/system'), { recursive: true });
    await writeFile(join(overlay, 'etc/systemd/system/molt-test-report.service'), reportUnit);
    out = join(work.path, 'out');
    const t0 = performance.now();
    const built = await molt([
      'image',
      'build',
      '--version',
      Version,
      '--out',
      out,
      '--overlay',
      overlay,
      '--enable',
      'molt-test-report.service',
      '--json',
      ...(process.env['MOLT_TEST_IMAGE_FLAGS'] ?? '').split(' ').filter(Boolean),
    ]);
    assert.equal(built.code, 0, built.stderr);
    const summary = JSON.parse(built.stdout) as {
      cached: boolean;
      artifacts: Record<string, { bytes: number }>;
      timings: Record<string, number>;
    };
    const sizes = Object.entries(summary.artifacts).map(([n, a]) => `${n}=${a.bytes}`);
    console.log(
      `image built in ${Math.round(performance.now() - t0)} ms (cached=${summary.cached}): ${sizes.join(' ')} timings=${JSON.stringify(summary.timings)}`,
    );
    cmdline = (await readFile(join(out, 'cmdline'), 'utf8')).trim();
    const state = join(work.path, 'state');
    await stateDir(state);
    disk = join(work.path, 'disk.raw');
    await makeDisk(disk, {
      layout: Layout,
      rootfs: join(out, 'rootfs.img'),
      stateDir: state,
    });
  });

  after(async () => {
    await work.remove();
  });

  it('boots slot A to multi-user with the mounts, the boot marker and the agent', async () => {
    const t0 = performance.now();
    const vm = bootVm({
      kernel: join(out, 'vmlinuz'),
      initrd: join(out, 'initrd.img'),
      disk,
      append: `${slotCmdline('A', cmdline)} systemd.show_status=1`,
    });
    try {
      const armed = await timeTo(vm, /molt-watchdog: armed (.+) \((\d+) s\)/, t0, BootDeadlineMs);
      assert.equal(armed.match[1], 'i6300ESB timer');
      const multiUser = await timeTo(vm, /Reached target.*Multi-User System/, t0, BootDeadlineMs);
      const marker = await timeTo(
        vm,
        /MOLT-BOOTED slot=(\S+) version=(\S+) boot=([0-9a-f-]{36}) uptime=(\S+)\r?\n/,
        t0,
        BootDeadlineMs,
      );
      assert.equal(marker.match[1], 'A');
      assert.equal(marker.match[2], Version);
      const mounts = await timeTo(vm, /MOLT-TEST-MOUNTS (.*)\r?\n/, t0, BootDeadlineMs);
      const table = (mounts.match[1] ?? '').split(',');
      for (const m of [
        '/ squashfs',
        '/molt/esp vfat',
        '/molt/state ext4',
        '/molt/ephemeral ext4',
        '/var tmpfs',
      ])
        assert.ok(table.includes(m), `${m} in ${table.join(',')}`);
      // The cmdline's root hash opened slot A through dm-verity before the mount.
      assert.match(cmdline, /(^| )molt\.verity=[0-9a-f]{64}:\d+( |$)/);
      await timeTo(vm, /molt-verity: PARTLABEL=molt-a \(\S+\) opened verified/, t0, BootDeadlineMs);
      const root = await timeTo(vm, /MOLT-TEST-ROOT (.*)\r?\n/, t0, BootDeadlineMs);
      assert.equal(root.match[1]?.trim(), '/dev/mapper/molt-root verified');
      const links = await timeTo(vm, /MOLT-TEST-LINKS (.*)\r?\n/, t0, BootDeadlineMs);
      assert.equal(links.match[1]?.trim(), 'slots=state/slots run=/run/molt');
      const agent = await timeTo(
        vm,
        /molt agent: vm-1 booted slot A, listening on (\S+)\r?\n/,
        t0,
        BootDeadlineMs,
      );
      const failed = await timeTo(vm, /MOLT-TEST-FAILED \[(.*)\]/, t0, BootDeadlineMs);
      console.log(
        `boot: watchdog armed ${armed.ms} ms, multi-user ${multiUser.ms} ms, marker ${marker.ms} ms (guest uptime ${marker.match[4]} s), agent ${agent.ms} ms; failed units: [${failed.match[1]?.trim()}]`,
      );
      assert.equal(failed.match[1]?.trim(), '', 'no unit failed');
    } finally {
      await vm.stop(2_000);
      await keepConsole(vm.output());
    }
  });

  it('resets a boot that hangs in the initramfs through the watchdog', async () => {
    const t0 = performance.now();
    const vm = bootVm({
      kernel: join(out, 'vmlinuz'),
      initrd: join(out, 'initrd.img'),
      disk,
      append: `${slotCmdline('A', cmdline)} break=premount`,
    });
    try {
      const first = await timeTo(vm, /molt-watchdog: armed/, t0, BootDeadlineMs);
      await timeTo(vm, /Spawning shell within the initramfs/, t0, BootDeadlineMs);
      const second = await timeTo(
        vm,
        /molt-watchdog: armed[\s\S]*molt-watchdog: armed/,
        t0,
        BootDeadlineMs,
      );
      console.log(`watchdog: armed at ${first.ms} ms, the VM booted again at ${second.ms} ms`);
    } finally {
      await vm.stop(2_000);
      await keepConsole(vm.output());
    }
  });

  it('refuses a slot whose bytes no longer match the root hash: the kernel panics, and the next boot finds why in pstore', async () => {
    const slotA = partitions(Layout).find((p) => p.name === 'molt-a');
    assert.ok(slotA);
    const flip = async (): Promise<void> => {
      const at = slotA.startMiB * 2 ** 20 + TamperedByte;
      const file = await open(disk, 'r+');
      try {
        const byte = Buffer.alloc(1);
        await file.read(byte, 0, 1, at);
        byte[0] = (byte[0] ?? 0) ^ 0xff;
        await file.write(byte, 0, 1, at);
      } finally {
        await file.close();
      }
    };
    // Through OVMF, so the panicking kernel has an EFI variable store to leave its log in.
    const vars = join(work.path, 'OVMF_VARS.fd');
    await copyFile(OvmfVarsTemplate, vars);
    const boot = (): ReturnType<typeof bootVm> =>
      bootVm({
        kernel: join(out, 'vmlinuz'),
        initrd: join(out, 'initrd.img'),
        disk,
        append: slotCmdline('A', cmdline),
        vars,
      });
    await flip();
    let t0 = performance.now();
    const tampered = boot();
    try {
      await timeTo(
        tampered,
        /molt-verity: PARTLABEL=molt-a \(\S+\) opened verified/,
        t0,
        BootDeadlineMs,
      );
      const corrupt = await timeTo(
        tampered,
        /device-mapper: verity: [^\n]*data block 0 is corrupted[\s\S]*Kernel panic - not syncing: dm-verity device corrupted/,
        t0,
        BootDeadlineMs,
      );
      const again = await timeTo(
        tampered,
        /Kernel panic - not syncing[\s\S]*molt-watchdog: armed/,
        t0,
        BootDeadlineMs,
      );
      assert.doesNotMatch(tampered.output(), /Reached target.*Multi-User System/);
      console.log(
        `verity: the kernel panicked at ${corrupt.ms} ms, the VM booted again at ${again.ms} ms`,
      );
    } finally {
      await tampered.stop(2_000);
      await keepConsole(tampered.output());
    }
    // The slot as built again: it boots, and systemd-pstore has the panic's log from the variable.
    await flip();
    t0 = performance.now();
    const repaired = boot();
    try {
      const kept = await timeTo(repaired, /MOLT-TEST-PSTORE \[(.*)\]/, t0, BootDeadlineMs);
      assert.match(kept.match[1] ?? '', /^Kernel panic - not syncing: dm-verity device corrupted/);
    } finally {
      await repaired.stop(2_000);
      await keepConsole(repaired.output());
    }
  });
});
