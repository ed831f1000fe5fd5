// SPDX-License-Identifier: Apache-2.0
/**
 * Benchmark P5 (docs/adr/0008 §3): writing a 256 MiB slot from the registry into a slot
 * partition of a disk image. The disk image is a GPT made with `sfdisk` (the five molt
 * partitions, slots of 256 MiB), each slot a region of it (offset from `sfdisk --json`); the
 * installer image holds a 256 MiB random (incompressible) `rootfs.img` and a 4 KiB kernel, in the
 * real docker-registry 2.8 on loopback. Per round, the same work on both sides:
 * - molt: the agent's PullImage path for the block-device slot store
 *   (`createOciImageSource().pull` with the store's `pullTargets`): resolve, contract check, the
 *   rootfs streamed into partition B — hashed, written in batches, fsynced — and `staged.json`;
 * - peer: `curl -s URL | tee >(sha256sum >FILE) | dd of=DISK seek=OFFSET
 *   oflag=seek_bytes,direct conv=fsync,notrunc bs=4M` of the rootfs blob into partition A. Without
 *   `iflag=fullblock`, dd writes each read of the pipe (often 64 KiB) as one direct write; the
 *   table shows the peer with it too (not in the ratio).
 * One warm-up each (discarded), then 5 rotating rounds; medians. Target: molt / peer ≤ 1.2.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createBlockSlotStore } from '../src/agent/adapters/block-slot-store/index.ts';
import { createOciImageSource } from '../src/agent/adapters/oci-image-source/index.ts';
import type { SlotStore } from '../src/agent/ports/slot-store.ts';
import { startRegistry, type RunningRegistry } from '../src/lab/services/registry.ts';
import { createRegistryClient } from '../src/oci/index.ts';
import { tempDir } from '../src/platform/process/managed-process.ts';
import { makeDiskImage, type DiskImage } from '../src/testkit/disk-image.ts';
import { pushInstallerImage } from '../src/testkit/installer-image.ts';

const run = promisify(execFile);
const repository = 'bench/slot';
const MiB = 1024 * 1024;
const slotBytes = 256 * MiB;
const rounds = 5;

interface Side {
  readonly name: string;
  /** One write of the slot; returns its wall time in ms. */
  readonly once: () => Promise<number>;
}

function molt(registry: RunningRegistry, root: string, store: SlotStore): Side {
  const source = createOciImageSource({ root, registry: { insecure: true } });
  return {
    name: 'molt pull into partition B',
    async once() {
      await store.discardStaged('B'); // else the next pull re-hashes and reuses this one
      const targets = (await store.pullTargets?.('B')) ?? {};
      const started = performance.now();
      await source.pull(`${registry.host}/${repository}:slot`, 'B', {
        inPlace: { targets, beforeOverwrite: () => store.markWriting('B', 'bench') },
      });
      return performance.now() - started;
    },
  };
}

function peer(url: string, disk: DiskImage, sumFile: string, fullblock = false): Side {
  const script = [
    'set -o pipefail',
    'curl -sf "$1" | tee >(sha256sum > "$2") |',
    `  dd of="$3" seek="$4" oflag=seek_bytes,direct conv=fsync,notrunc bs=4M status=none${fullblock ? ' iflag=fullblock' : ''}`,
    'wait $!', // the sha256sum of the process substitution
  ].join('\n');
  return {
    name: `curl | tee >(sha256sum) | dd oflag=direct${fullblock ? ' (fullblock)' : ''}`,
    async once() {
      const started = performance.now();
      const args = [url, sumFile, disk.path, String(disk.slots.A.offset)];
      await run('bash', ['-c', script, 'bash', ...args]);
      return performance.now() - started;
    },
  };
}

const median = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

async function measure(sides: readonly Side[]): Promise<number[][]> {
  const times: number[][] = sides.map(() => []);
  for (let round = 0; round <= rounds; round++) {
    // Rotate which side goes first, so none always runs on a warmer machine.
    for (let j = 0; j < sides.length; j++) {
      const i = (round + j) % sides.length;
      const ms = await (sides[i] as Side).once();
      if (round > 0) times[i]?.push(ms);
    }
  }
  return times;
}

const row = (name: string, xs: readonly number[]): string =>
  `${name.padEnd(58)}${`${Math.round(median(xs))} ms`.padStart(10)}${`${(slotBytes / MiB / (median(xs) / 1000)).toFixed(0)} MiB/s`.padStart(14)}   ${xs.map((x) => Math.round(x)).join(' ')}`;

/** Run P5 and print its table and `BENCH P5 …` line. */
export async function runP5(): Promise<void> {
  const registry = await startRegistry();
  const scratch = await tempDir('bench-p5');
  const client = createRegistryClient({ registry: registry.host, insecure: true });
  try {
    const pushed = await pushInstallerImage(client, repository, 'slot', {
      version: '1.0.0',
      artifacts: { vmlinuz: 4096, 'rootfs.img': slotBytes },
    });
    const rootfs = pushed.built.layers.find((l) => l.descriptor.size === slotBytes);
    if (rootfs === undefined) throw new Error('the image has no 256 MiB layer');
    const disk = await makeDiskImage(join(scratch.path, 'disk.img'), slotBytes / MiB);
    const store = createBlockSlotStore(scratch.path, { partitions: disk.slots });
    const sumFile = join(scratch.path, 'peer.sha256');
    const url = `${registry.url}/v2/${repository}/blobs/${rootfs.descriptor.digest}`;
    const sides = [
      molt(registry, scratch.path, store),
      peer(url, disk, sumFile),
      peer(url, disk, sumFile, true),
    ] as const;
    const [m = [], p = [], full = []] = await measure(sides);
    // Both wrote the same bytes and hashed them right.
    const peerSum = (await readFile(sumFile, 'utf8')).split(' ')[0];
    if (`sha256:${peerSum}` !== rootfs.descriptor.digest) throw new Error('peer: wrong digest');
    const staged = await store.checkStaged('B');
    if (staged.imageDigest !== pushed.digest) throw new Error('molt: wrong image staged');
    await store.install('B', 'bench');
    await store.verify('B', 'bench');
    const ratio = median(m) / median(p);
    const load = (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
    const lines = [
      `P5: a ${slotBytes / MiB} MiB slot (random rootfs.img, raw layer) from docker-registry 2.8 at ${registry.host} into a partition of a GPT disk image (${disk.path}, slot A at ${disk.slots.A.offset}, B at ${disk.slots.B.offset})`,
      `cores: ${availableParallelism()}; load average at the end: ${load}; 1 warm-up + ${rounds} rotating rounds, medians`,
      '',
      `${'run'.padEnd(58)}${'median'.padStart(10)}${'throughput'.padStart(14)}   rounds (ms)`,
      row(sides[0].name, m),
      row(sides[1].name, p),
      row(sides[2].name, full),
      '',
      `ratio molt / peer: ${ratio.toFixed(2)} (target ≤ 1.2); molt / peer with iflag=fullblock (dd then writes whole 4 MiB blocks, not what the pipe hands it): ${(median(m) / median(full)).toFixed(2)}; molt's slot verified by read-back`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    process.stdout.write(
      `BENCH P5 ratio=${ratio.toFixed(2)} molt_ms=${Math.round(median(m))} peer_ms=${Math.round(median(p))} bytes=${slotBytes}\n`,
    );
  } finally {
    await client.close();
    await registry.stop();
    await scratch.remove();
  }
}
