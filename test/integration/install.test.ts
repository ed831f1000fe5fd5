// SPDX-License-Identifier: Apache-2.0
// `molt install` onto a disk image file, for both bootloaders, with an image pulled from the real
// docker-registry; the disk is then read back with the real tools: sfdisk (the GPT), mtools (the
// ESP), grub-editenv / bootctl (the bootloader's state), debugfs (STATE), cmp (slot A).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { GrubCfg } from '../../src/core/boot/grub-cfg.ts';
import {
  DefaultSizes,
  MiB,
  PartitionName,
  PartitionOrder,
  PartitionType,
  partitionOf,
  planDisk,
  sfdiskScript,
} from '../../src/core/disk/layout.ts';
import { pushContainerImages } from '../../src/lab/services/container-images.ts';
import { installDisk } from '../../src/image/install/install-disk.ts';
import { tempDir } from '../../src/platform/process/managed-process.ts';
import { writeKubernetesPki } from '../../src/platform/pki/kubernetes.ts';
import {
  controlPlaneOf,
  debugfs,
  extract,
  fatFile,
  moltBin,
  partitions,
  repo,
  run,
  sdBootEfi,
  sha256,
  startFixture,
  testSizes,
  type Fixture,
} from './install-fixtures.ts';

const diskBytes = 700 * MiB;

describe('molt install onto a disk file', () => {
  let fx: Fixture;
  let dir: { path: string; remove: () => Promise<void> };
  let artifacts: Readonly<Record<string, Uint8Array>>;
  before(async () => {
    dir = await tempDir('install');
    fx = await startFixture(dir.path);
    artifacts = await fx.push('1.0.0');
  });
  after(async () => {
    await fx.stop();
    await dir.remove();
  });

  it('writes the GPT, GRUB, slot A, STATE and EPHEMERAL, as the tools read them back', async () => {
    const disk = join(dir.path, 'grub.img');
    const machine = await fx.machine('node-grub', 'grub');
    const image = `${fx.registry.host}/${repo}:1.0.0`;
    const started = performance.now();
    const result = await installDisk({
      ...machine,
      disk,
      image,
      insecure: true,
      sizes: testSizes,
      diskBytes,
    });
    const seconds = (performance.now() - started) / 1000;
    console.log(`# one install (grub, 16 MiB slots, 700 MiB disk file): ${seconds.toFixed(2)} s`);
    assert.equal(result.image.version, '1.0.0');
    assert.equal(result.previous, 'empty');
    assert.equal((await stat(disk)).size, diskBytes);
    // STATE's private key lies on it in the clear: the file is its owner's alone.
    assert.equal((await stat(disk)).mode & 0o777, 0o600);

    const parts = await partitions(disk);
    assert.deepEqual(
      parts.map((p) => p.name),
      PartitionOrder,
    );
    assert.deepEqual(
      parts.map((p) => p.type),
      [
        PartitionType.Esp,
        PartitionType.RootX86_64,
        PartitionType.RootX86_64,
        PartitionType.LinuxData,
        PartitionType.LinuxData,
      ],
    );
    assert.deepEqual(
      parts.map((p) => [p.start * 512, p.size * 512]),
      result.plan.partitions.map((p) => [p.offset, p.size]),
    );
    const [esp, a, , state, ephemeral] = result.plan.partitions;
    assert.ok(esp && a && state && ephemeral);

    // ESP: the removable-path GRUB, slot A's kernel and initramfs, molt's grub.cfg, slot A's entry.
    const efi = await fatFile(disk, esp.offset, '/EFI/BOOT/BOOTX64.EFI');
    assert.equal(efi.subarray(0, 2).toString(), 'MZ');
    assert.equal(
      sha256(await fatFile(disk, esp.offset, '/molt/a/vmlinuz')),
      sha256(artifacts['vmlinuz'] ?? new Uint8Array()),
    );
    assert.equal(
      sha256(await fatFile(disk, esp.offset, '/molt/a/initrd.img')),
      sha256(artifacts['initrd.img'] ?? new Uint8Array()),
    );
    assert.equal((await fatFile(disk, esp.offset, '/grub/grub.cfg')).toString(), GrubCfg);
    const entry = (await fatFile(disk, esp.offset, '/molt/a/grub.cfg')).toString();
    assert.match(entry, /^linux \/molt\/a\/vmlinuz molt\.slot=A .*console=ttyS0 quiet$/m);
    const grubenv = join(dir.path, 'grubenv');
    await writeFile(grubenv, await fatFile(disk, esp.offset, '/grub/grubenv'));
    const env = (await run('grub-editenv', [grubenv, 'list'])).stdout;
    assert.match(env, /^saved_entry=molt-a$/m);
    assert.match(env, /^molt_a=ok$/m, 'slot A may boot');

    // Slot A: the rootfs bytes at the partition's offset.
    const rootfs = artifacts['rootfs.img'] ?? new Uint8Array();
    const slotCopy = join(dir.path, 'slot-a');
    await extract(disk, a.offset, a.size, slotCopy);
    assert.equal(sha256((await readFile(slotCopy)).subarray(0, rootfs.length)), sha256(rootfs));

    // STATE: config (with disk:), PKI (key 0600), slot A's manifest, ext4 labelled molt-state.
    // e2fsprogs read a filesystem inside a file with the io option `?offset=`.
    const stateCopy = `${disk}?offset=${String(state.offset)}`;
    assert.match((await run('e2label', [stateCopy])).stdout, /^molt-state$/m);
    const config = await debugfs(stateCopy, 'cat /config.yaml');
    assert.match(config, /^# node-grub, installed by the tests/m);
    assert.match(config, /^disk: \{\}$/m);
    assert.match(await debugfs(stateCopy, 'stat /pki/node.key'), /Mode: +0600/);
    assert.match(await debugfs(stateCopy, 'cat /pki/node.pem'), /BEGIN CERTIFICATE/);
    assert.match(await debugfs(stateCopy, 'cat /pki/ca.pem'), /BEGIN CERTIFICATE/);
    // The machine's name, which the image's molt-hostname.service makes its hostname at boot.
    assert.equal(await debugfs(stateCopy, 'cat /hostname'), 'node-grub\n');
    const slot = JSON.parse(await debugfs(stateCopy, 'cat /slots/a/slot.json')) as {
      status: string;
      version: string;
      artifacts: Record<string, { digest: string }>;
    };
    assert.equal(slot.status, 'ready');
    assert.equal(slot.artifacts['rootfs.img']?.digest, sha256(rootfs));
    assert.equal(await debugfs(stateCopy, 'cat /slots/a/cmdline'), 'console=ttyS0 quiet');
    await run('e2fsck', ['-fn', stateCopy]);

    // EPHEMERAL: an empty ext4 labelled molt-ephemeral.
    const ephCopy = `${disk}?offset=${String(ephemeral.offset)}`;
    assert.match((await run('e2label', [ephCopy])).stdout, /^molt-ephemeral$/m);
    assert.doesNotMatch(await debugfs(ephCopy, 'ls -l /'), /config/);
  });

  it('installs systemd-boot with its loader entry, through the CLI, and replaces the machine only when told', async () => {
    const disk = join(dir.path, 'sdboot.img');
    const machine = await fx.machine('node-sd', 'systemd-boot');
    const efiBinary = await sdBootEfi();
    const args = [
      moltBin,
      'install',
      '--disk',
      disk,
      '--image',
      `${fx.registry.host}/${repo}:1.0.0`,
      '--bootloader',
      'systemd-boot',
      '--config',
      machine.config,
      '--pki',
      machine.pki,
      '--slot-size',
      '16M',
      '--disk-size',
      '700M',
      '--efi-binary',
      efiBinary,
      '--insecure',
      '--json',
    ];
    const out = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, args, (error, stdout, stderr) => {
        if (error) reject(new Error(`${error.message}\n${stderr}`));
        else resolve(stdout);
      });
    });
    const result = JSON.parse(out) as {
      previous: string;
      plan: { partitions: { offset: number }[] };
    };
    assert.equal(result.previous, 'empty');
    const espOffset = result.plan.partitions[0]?.offset ?? 0;
    assert.deepEqual(
      await fatFile(disk, espOffset, '/EFI/BOOT/BOOTX64.EFI'),
      await readFile(efiBinary),
    );
    const entry = (await fatFile(disk, espOffset, '/loader/entries/molt-a.conf')).toString();
    assert.match(entry, /^linux +\/molt\/a\/vmlinuz$/m);
    assert.match(entry, /^initrd +\/molt\/a\/initrd\.img$/m);
    assert.match(entry, /^options +molt\.slot=A .*console=ttyS0 quiet$/m);
    assert.match((await fatFile(disk, espOffset, '/loader/loader.conf')).toString(), /default/);

    assert.equal((await stat(disk)).mode & 0o777, 0o600);

    // Again: STATE holds node-sd, so the CLI refuses (naming the disk and the machine) until told.
    const refusal = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      execFile(process.execPath, args, (error, _stdout, stderr) => {
        resolve({ code: error === null ? 0 : (error.code as number), stderr });
      });
    });
    assert.notEqual(refusal.code, 0);
    assert.match(refusal.stderr, /MOLT_DISK_HOLDS_MACHINE/);
    assert.match(refusal.stderr, new RegExp(`${disk} is a molt machine's disk: .*node-sd`));
    const again = await installDisk({
      ...machine,
      disk,
      image: `${fx.registry.host}/${repo}:1.0.0`,
      insecure: true,
      sizes: testSizes,
      efiBinary,
      overwriteMachine: true,
    });
    assert.equal(again.previous, 'machine');
    assert.equal(again.previousNode, 'node-sd');
  });

  it("reuses molt's layout an interrupted install left (STATE empty) without being told", async () => {
    const disk = join(dir.path, 'interrupted.img');
    await run('truncate', ['-s', '700M', disk]);
    await chmod(disk, 0o600);
    const plan = planDisk(diskBytes, { ...DefaultSizes, ...testSizes });
    // What the installer writes first: the table, and nothing on STATE yet.
    const script = join(dir.path, 'interrupted.sfdisk');
    await writeFile(script, sfdiskScript(plan));
    await run('sh', ['-c', 'sfdisk -q "$1" < "$2"', 'sh', disk, script]);
    // A real Kubernetes node: its kubelet's and containerd's files come onto STATE too.
    const ca = await fx.ca();
    const tokenFile = join(dir.path, 'bootstrap-token');
    await writeFile(tokenFile, 'abcdef.0123456789abcdef\n', { mode: 0o600 });
    // The sandbox image must be in its registry: install checks it before touching the disk.
    const { pause } = await pushContainerImages({ registry: fx.registry.host, insecure: true });
    const machine = await fx.machine('node-again', 'grub', {
      registry: { insecure: true, mirrors: { '127.0.0.1:5000': '10.0.2.2:5000' } },
      kubernetes: {
        kubeconfig: '/molt/state/agent.kubeconfig',
        node: {
          server: 'https://10.0.2.2:6443',
          caFile: ca,
          bootstrapTokenFile: tokenFile,
          podCidr: '10.244.3.0/24',
          sandboxImage: pause.byTag,
          address: '10.231.7.12',
        },
      },
      // Its address on a node network without DHCP, and the route to another node's pods.
      network: {
        interfaces: [
          {
            mac: '52:54:00:e7:07:0c',
            addresses: ['10.231.7.12/24'],
            routes: [{ to: '10.244.1.0/24', via: '10.231.7.11' }],
          },
        ],
      },
    });
    // The agent's own identity, carried onto STATE where the config names it.
    const agentKubeconfig = join(dir.path, 'agent.kubeconfig');
    const kubeconfigText = [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{name: c, cluster: {server: "https://10.0.2.2:6443"}}]',
      'users: [{name: "molt:agent:node-again", user: {token: t0k3n}}]',
      'contexts: [{name: c, context: {cluster: c, user: "molt:agent:node-again"}}]',
      'current-context: c',
      '',
    ].join('\n');
    await writeFile(agentKubeconfig, kubeconfigText, { mode: 0o600 });
    const result = await installDisk({
      ...machine,
      disk,
      image: `${fx.registry.host}/${repo}:1.0.0`,
      insecure: true,
      sizes: testSizes,
      kubeconfig: agentKubeconfig,
    });
    assert.equal(result.previous, 'molt');
    const state = partitionOf(result.plan, PartitionName.State);
    const config = await debugfs(`${disk}?offset=${String(state.offset)}`, 'cat /config.yaml');
    assert.match(config, /^node: node-again$/m);
    const nodeDir = `${disk}?offset=${String(state.offset)}`;
    const cat = (path: string) => debugfs(nodeDir, `cat /kubernetes/node/${path}`);
    assert.match(await cat('bootstrap.kubeconfig'), /token: abcdef\.0123456789abcdef$/m);
    assert.match(
      await debugfs(nodeDir, 'stat /kubernetes/node/bootstrap.kubeconfig'),
      /Mode: +0600/,
    );
    assert.equal(await cat('ca.crt'), await readFile(ca, 'utf8'));
    assert.match(
      await cat('kubelet.env'),
      /^KUBELET_ARGS=--hostname-override=node-again --node-ip=10\.231\.7\.12$/m,
    );
    const networkd = await debugfs(nodeDir, 'cat /network/10-molt-0.network');
    assert.match(networkd, /^MACAddress=52:54:00:e7:07:0c$/m);
    assert.match(networkd, /^Address=10\.231\.7\.12\/24$/m);
    assert.match(networkd, /^Destination=10\.244\.1\.0\/24\nGateway=10\.231\.7\.11$/m);
    assert.ok(
      (await cat('containerd.toml')).includes(`sandbox = "${pause.byTag}"`),
      'the sandbox image in containerd.toml',
    );
    assert.match(
      await cat('certs.d/127.0.0.1:5000/hosts.toml'),
      /^server = "http:\/\/10\.0\.2\.2:5000"$/m,
    );
    assert.match(await cat('cni/10-molt-bridge.conflist'), /"subnet": "10\.244\.3\.0\/24"/);
    assert.match(await cat('kubelet.yaml'), /^kind: KubeletConfiguration$/m);
    assert.match(await debugfs(nodeDir, 'ls -l /kubernetes/node'), /manifests/);
    assert.equal(await debugfs(nodeDir, 'cat /agent.kubeconfig'), kubeconfigText);
    assert.match(await debugfs(nodeDir, 'stat /agent.kubeconfig'), /Mode: +0600/);
  });

  it("lays a control-plane machine's cluster PKI onto STATE: keys, kubeconfigs and the bootstrap token 0600", async () => {
    const kube = join(dir.path, 'kube-pki');
    await writeKubernetesPki({ cluster: 'prod', dir: kube, server: 'https://10.231.0.11:6443' });
    const machine = await fx.machine(
      'cp-1',
      'grub',
      controlPlaneOf('cp-1', { cluster: 'prod', dir: '/molt/state/kube' }),
    );
    const disk = join(dir.path, 'cp-1.img');
    const result = await installDisk({
      ...machine,
      disk,
      diskBytes,
      image: `${fx.registry.host}/${repo}:1.0.0`,
      insecure: true,
      // A control plane's STATE is 1 GiB unless told: this small test disk tells it.
      sizes: { ...testSizes, state: 64 * MiB },
      kubePki: kube,
    });
    const state = `${disk}?offset=${String(partitionOf(result.plan, PartitionName.State).offset)}`;
    for (const [file, mode] of [
      ['pki/ca.crt', '0644'],
      ['pki/ca.key', '0600'],
      ['pki/sa.key', '0600'],
      ['pki/sa.pub', '0644'],
      ['admin.conf', '0600'],
      ['scheduler.conf', '0600'],
      ['bootstrap-token', '0600'],
    ] as const) {
      assert.equal(
        await debugfs(state, `cat /kube/${file}`),
        await readFile(join(kube, file), 'utf8'),
        file,
      );
      assert.match(await debugfs(state, `stat /kube/${file}`), new RegExp(`Mode: +${mode}`), file);
    }
    assert.match(await debugfs(state, 'stat /kube/pki'), /Mode: +0700/);
  });
});
