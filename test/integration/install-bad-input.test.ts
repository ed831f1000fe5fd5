// SPDX-License-Identifier: Apache-2.0
// `molt install` on bad input: every refusal has its stable code, and the disk file hashes the
// same before and after (a new disk file is not even created). Another machine's disk is bad input
// too: refused unless --overwrite-machine, even with --wipe.
import assert from 'node:assert/strict';
import { access, chmod, cp, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MiB } from '../../src/core/disk/layout.ts';
import { ErrorCode, isMoltError, type ErrorCode as Code } from '../../src/core/errors.ts';
import { installDisk, type InstallOptions } from '../../src/image/install/install-disk.ts';
import { tempDir } from '../../src/platform/process/managed-process.ts';
import { writeKubernetesPki } from '../../src/platform/pki/kubernetes.ts';
import {
  controlPlaneOf,
  fileHash,
  repo,
  run,
  smallImage,
  startFixture,
  type Fixture,
} from './install-fixtures.ts';

/** The smallest layout the 3 MiB test image fits: a 346 MiB disk, so hashing it stays quick. */
const sizes = { esp: 64 * MiB, slot: 4 * MiB, state: 16 * MiB };

const without = (artifacts: Readonly<Record<string, Uint8Array | number>>, name: string) =>
  Object.fromEntries(Object.entries(artifacts).filter(([n]) => n !== name));

describe('molt install refuses bad input and writes nothing', () => {
  let fx: Fixture;
  let dir: { path: string; remove: () => Promise<void> };
  let base: InstallOptions;
  /**
   * An empty disk file, a GPT disk file that is someone else's, a 1 MiB one for checks made before
   * the disk's, and a machine's (node-1 installed on it). All 0600, as a disk file must be.
   */
  let blank: string;
  let foreign: string;
  let tiny: string;
  let machineDisk: string;
  before(async () => {
    dir = await tempDir('install-bad');
    fx = await startFixture(dir.path);
    await fx.push('1.0.0');
    const machine = await fx.machine('node-1', 'grub');
    base = {
      ...machine,
      disk: '',
      image: `${fx.registry.host}/${repo}:1.0.0`,
      insecure: true,
      sizes,
    };
    blank = join(dir.path, 'blank.img');
    await run('truncate', ['-s', '346M', blank]);
    foreign = join(dir.path, 'foreign.img');
    await run('truncate', ['-s', '346M', foreign]);
    tiny = join(dir.path, 'tiny.img');
    await writeFile(tiny, Buffer.alloc(MiB, 7));
    await run('sh', [
      '-c',
      'echo "label: gpt\nsize=64M, name=root" | sfdisk -q "$1"',
      'sh',
      foreign,
    ]);
    for (const disk of [blank, foreign, tiny]) await chmod(disk, 0o600);
    machineDisk = join(dir.path, 'machine.img');
    await installDisk({ ...base, disk: machineDisk, diskBytes: 346 * MiB });
  });
  after(async () => {
    await fx.stop();
    await dir.remove();
  });

  /** The disks' hashes, stat times and modes before any test: a refused install changes none. */
  const original = new Map<string, { hash: string; mtimeNs: bigint; size: bigint; mode: bigint }>();
  async function snapshot(disk: string) {
    const info = await stat(disk, { bigint: true });
    return { hash: await fileHash(disk), mtimeNs: info.mtimeNs, size: info.size, mode: info.mode };
  }

  /** Expect `code`, and the disk file (if any) unchanged: same bytes, never written (mtime). */
  async function refused(
    options: Partial<InstallOptions>,
    code: Code,
    message?: RegExp,
  ): Promise<void> {
    const disk = options.disk ?? blank;
    const existed = await access(disk).then(
      () => true,
      () => false,
    );
    if (existed && !original.has(disk)) original.set(disk, await snapshot(disk));
    await assert.rejects(installDisk({ ...base, disk, ...options }), (e) => {
      assert.ok(isMoltError(e), String(e));
      assert.equal(e.code, code, e.message);
      if (message !== undefined) assert.match(e.message, message);
      return true;
    });
    if (existed) assert.deepEqual(await snapshot(disk), original.get(disk), 'the disk changed');
    else await assert.rejects(access(disk), 'the disk file was created');
  }

  it('a disk too small: MOLT_DISK_TOO_SMALL', async () => {
    const small = join(dir.path, 'small.img');
    await run('truncate', ['-s', '345M', small]);
    await chmod(small, 0o600);
    await refused({ disk: small }, ErrorCode.DiskTooSmall, /needs at least 346 MiB/);
  });

  it("a partition table that is not molt's, or a bare filesystem: MOLT_DISK_NOT_MOLT", async () => {
    await refused({ disk: foreign }, ErrorCode.DiskNotMolt, /partitions are root/);
    const ext4 = join(dir.path, 'ext4.img');
    await run('truncate', ['-s', '346M', ext4]);
    await run('mke2fs', ['-q', '-F', '-t', 'ext4', ext4]);
    await refused({ disk: ext4 }, ErrorCode.DiskNotMolt, /no partition table but ext4/);
  });

  it("another machine's disk, with --wipe or without: MOLT_DISK_HOLDS_MACHINE naming it", async () => {
    const other = await fx.machine('node-3', 'grub');
    const holds = new RegExp(
      `^${machineDisk} is a molt machine's disk: its STATE holds the machine node-1 \\(config\\.yaml, hostname, journal, pki, slots\\)$`,
    );
    await refused({ ...other, disk: machineDisk }, ErrorCode.DiskHoldsMachine, holds);
    await refused({ ...other, disk: machineDisk, wipe: true }, ErrorCode.DiskHoldsMachine, holds);
    await refused({ disk: machineDisk, dryRun: true }, ErrorCode.DiskHoldsMachine, holds);
    const told = await installDisk({
      ...base,
      ...other,
      disk: machineDisk,
      overwriteMachine: true,
      dryRun: true,
    });
    assert.equal(told.previous, 'machine');
    assert.equal(told.previousNode, 'node-1');
  });

  it('a disk file group or others can read: MOLT_SECRET_EXPOSED, its mode left as it was', async () => {
    const open = join(dir.path, 'open.img');
    await run('truncate', ['-s', '346M', open]);
    await chmod(open, 0o640);
    await refused({ disk: open }, ErrorCode.SecretExposed, /open to group or others \(mode 0640\)/);
  });

  it('an image larger than its slot: MOLT_IMAGE_TOO_LARGE', async () => {
    await refused(
      { sizes: { ...sizes, slot: 2 * MiB } },
      ErrorCode.ImageTooLarge,
      /larger than a slot of 2 MiB/,
    );
  });

  it('a missing initrd or kernel: MOLT_IMAGE_INVALID', async () => {
    const noInitrd = without(smallImage, 'initrd.img');
    await fx.push('no-initrd', { artifacts: noInitrd });
    await refused(
      { image: `${fx.registry.host}/${repo}:no-initrd` },
      ErrorCode.ImageInvalid,
      /no initrd\.img/,
    );
    const noKernel = without(smallImage, 'vmlinuz');
    await fx.push('no-kernel', { artifacts: noKernel });
    await refused(
      {
        image: `${fx.registry.host}/${repo}:no-kernel`,
        disk: join(dir.path, 'new.img'),
        diskBytes: 346 * MiB,
      },
      ErrorCode.ImageInvalid,
    );
  });

  it('a disk file that backs a loop device: MOLT_DISK_IN_USE', async (t) => {
    const attached = await run('losetup', ['-f', '--show', blank]).catch(() => undefined);
    if (attached === undefined) {
      t.skip('losetup does not work here (not root?)');
      return;
    }
    const loop = attached.stdout.trim();
    try {
      await refused({}, ErrorCode.DiskInUse, new RegExp(`backs the loop device ${loop}`));
    } finally {
      await run('losetup', ['-d', loop]);
    }
  });

  it('a missing or invalid config, or one that disagrees with --bootloader', async () => {
    await refused(
      { config: join(dir.path, 'nope.yaml') },
      ErrorCode.MachineInvalid,
      /cannot be read/,
    );
    const bad = join(dir.path, 'bad.yaml');
    await writeFile(bad, 'node: n1\nrole: boss\nbootloader: grub\n');
    await refused({ disk: tiny, config: bad }, ErrorCode.MachineInvalid, /role/);
    await refused({ disk: tiny, bootloader: 'systemd-boot' }, ErrorCode.BadFlag, /disagrees/);
  });

  it("a Kubernetes node's CA or bootstrap token file missing or malformed, on this host", async () => {
    const token = join(dir.path, 'token');
    await writeFile(token, 'abcdef.0123456789abcdef\n', { mode: 0o600 });
    const ca = await fx.ca();
    const node = {
      server: 'https://10.0.2.2:6443',
      caFile: ca,
      bootstrapTokenFile: token,
      podCidr: '10.244.1.0/24',
      sandboxImage: '127.0.0.1:5000/molt/pause:3.10',
    };
    const withNode = (n: object) =>
      fx.machine('node-k8s', 'grub', { kubernetes: { kubeconfig: '/k', node: { ...node, ...n } } });
    const missing = join(dir.path, 'missing-ca.crt');
    await refused(
      { disk: tiny, ...(await withNode({ caFile: missing })) },
      ErrorCode.MachineInvalid,
      new RegExp(`kubernetes\\.node\\.caFile ${missing} cannot be read: ENOENT`),
    );
    await refused(
      { disk: tiny, ...(await withNode({ bootstrapTokenFile: join(dir.path, 'no-token') })) },
      ErrorCode.MachineInvalid,
      /kubernetes\.node\.bootstrapTokenFile .* cannot be read/,
    );
    await refused(
      { disk: tiny, ...(await withNode({ caFile: token })) },
      ErrorCode.PkiInvalid,
      /is not a PEM certificate/,
    );
    const absent = `${fx.registry.host}/molt/pause:absent`;
    await refused(
      { disk: tiny, ...(await withNode({ sandboxImage: absent })) },
      ErrorCode.ImageMissing,
      new RegExp(`kubernetes\\.node\\.sandboxImage ${absent} is not in its registry`),
    );
    const badToken = join(dir.path, 'bad-token');
    await writeFile(badToken, 'not-a-token\n');
    await refused(
      { disk: tiny, ...(await withNode({ bootstrapTokenFile: badToken })) },
      ErrorCode.MachineInvalid,
      /bootstrap token is not/,
    );
  });

  it('an agent kubeconfig (--kubeconfig) with nowhere to go on STATE, unreadable, or no kubeconfig: MOLT_BAD_FLAG', async () => {
    const file = join(dir.path, 'agent.kubeconfig');
    await writeFile(
      file,
      'clusters: [{name: c, cluster: {server: "https://h"}}]\nusers: [{name: u}]\ncontexts: [{name: c}]\n',
    );
    const at = (kubeconfig: string) =>
      fx.machine('node-kc', 'grub', { kubernetes: { kubeconfig } });
    await refused(
      { disk: tiny, ...(await at('/etc/k')), kubeconfig: file },
      ErrorCode.BadFlag,
      /--kubeconfig .* has nowhere to go: the machine config's kubernetes\.kubeconfig is \/etc\/k, not on STATE/,
    );
    await refused(
      { disk: tiny, ...(await fx.machine('node-kc2', 'grub')), kubeconfig: file },
      ErrorCode.BadFlag,
      /kubernetes\.kubeconfig is not set/,
    );
    await refused(
      { disk: tiny, ...(await at('/molt/state/k')), kubeconfig: join(dir.path, 'nope') },
      ErrorCode.BadFlag,
      /--kubeconfig .*nope cannot be read: ENOENT/,
    );
    const notOne = join(dir.path, 'not-a-kubeconfig');
    await writeFile(notOne, 'hello: [world\n');
    await refused(
      { disk: tiny, ...(await at('/molt/state/k')), kubeconfig: notOne },
      ErrorCode.BadFlag,
      /is not a kubeconfig with a cluster, a user and a context/,
    );
  });

  it("a control-plane machine's cluster PKI missing, another cluster's, or with nowhere to go", async () => {
    const prod = join(dir.path, 'kube-prod');
    await writeKubernetesPki({ cluster: 'prod', dir: prod, server: 'https://10.231.0.11:6443' });
    const wants = await fx.machine('cp-1', 'grub', controlPlaneOf('cp-1', { cluster: 'prod' }));
    await refused(
      { disk: tiny, ...wants },
      ErrorCode.KubePkiInvalid,
      /controlPlane\.pki is for cluster prod, and no --kube-pki DIR gives its PKI/,
    );
    const staging = await fx.machine(
      'cp-2',
      'grub',
      controlPlaneOf('cp-2', { cluster: 'staging' }),
    );
    await refused({ disk: tiny, ...staging, kubePki: prod }, ErrorCode.KubePkiInvalid, /staging/);
    await refused(
      { disk: tiny, ...wants, kubePki: join(dir.path, 'nowhere') },
      ErrorCode.KubePkiInvalid,
    );
    await refused(
      { disk: tiny, ...(await fx.machine('cp-3', 'grub', controlPlaneOf('cp-3'))), kubePki: prod },
      ErrorCode.BadFlag,
      /--kube-pki .* has nowhere to go: the machine config names no controlPlane\.pki/,
    );
    // A machine that registers the PKI's bootstrap token, given a PKI without one.
    const tokenless = join(dir.path, 'kube-tokenless');
    await cp(prod, tokenless, { recursive: true });
    await rm(join(tokenless, 'bootstrap-token'));
    await refused(
      {
        disk: tiny,
        ...(await fx.machine('cp-4', 'grub', controlPlaneOf('cp-4', { cluster: 'prod' }, {}))),
        kubePki: tokenless,
      },
      ErrorCode.KubePkiInvalid,
      /controlPlane\.bootstrap registers the PKI's bootstrap token, and .* has no bootstrap-token/,
    );
  });

  it("missing PKI, or another machine's certificate", async () => {
    await refused(
      { disk: tiny, pki: join(dir.path, 'nowhere') },
      ErrorCode.PkiInvalid,
      /has no ca\.pem/,
    );
    const other = await fx.machine('node-2', 'grub');
    await refused(
      { disk: tiny, pki: other.pki },
      ErrorCode.PkiInvalid,
      /has no node\.pem or node-1\.pem/,
    );
  });

  it('a missing disk file without --disk-size, and a --disk-size that would shrink the file', async () => {
    await refused({ disk: join(dir.path, 'missing.img') }, ErrorCode.BadFlag, /does not exist/);
    await refused({ disk: tiny, diskBytes: 4096 }, ErrorCode.BadFlag, /never shrinks/);
  });

  it('an --efi-binary that is not an EFI binary: MOLT_BAD_INPUT', async () => {
    const notEfi = join(dir.path, 'not.efi');
    await writeFile(notEfi, 'hello');
    await refused({ efiBinary: notEfi }, ErrorCode.BadInput, /not an EFI/);
  });

  it('a dry run checks everything, reports the plan and writes nothing', async () => {
    const before = await snapshot(foreign);
    const result = await installDisk({ ...base, disk: foreign, wipe: true, dryRun: true });
    assert.equal(result.dryRun, true);
    assert.equal(result.previous, 'foreign');
    assert.equal(result.plan.partitions.length, 5);
    assert.deepEqual(await snapshot(foreign), before);
  });
});
