// SPDX-License-Identifier: Apache-2.0
// Run as root, lab machines get network namespaces and addresses of their own
// (src/lab/fleet/network.ts). Three control-plane machines and a worker on a bridge: every agent and
// etcd member listens at its machine's address on the same well-known port, the etcd cluster forms
// across the namespaces, a worker pulls a release from the registry on the bridge address and
// upgrades; a VM's tap joins the bridge; and removing the network leaves nothing behind.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readlink, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { startLabFleet, type LabFleet } from '../../../src/lab/fleet/fleet.ts';
import { createNetnsNetwork, type LabNetwork } from '../../../src/lab/fleet/network.ts';
import { waitClusterHealthy } from '../../../src/lab/fleet/control-plane.ts';
import { startVm } from '../../../src/lab/vm/vm.ts';
import { tempDir } from '../../../src/platform/process/managed-process.ts';
import { moltArgv } from '../../../src/testkit/molt-entry.ts';

const run = promisify(execFile);
const root = process.getuid?.() === 0;
let scratch: { path: string; remove: () => Promise<void> };
let network: LabNetwork;
let fleet: LabFleet;
const stopped = { fleet: false };

async function stopFleet(): Promise<void> {
  if (stopped.fleet) return;
  stopped.fleet = true;
  await fleet.stop();
}

/** True when a TCP connection to host:port from this (the host's) namespace is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 2_000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => {
      resolve(false);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

before(async () => {
  if (!root) return;
  scratch = await tempDir('lab-netns');
  network = await createNetnsNetwork(scratch.path);
  fleet = await startLabFleet({ molt: moltArgv, workers: 1, dir: scratch.path, network });
});

after(async () => {
  if (!root) return;
  if ((fleet as LabFleet | undefined) !== undefined) await stopFleet();
  await (network as LabNetwork | undefined)?.remove();
  await (scratch as typeof scratch | undefined)?.remove();
});

describe('lab machines in network namespaces (root)', { skip: !root && 'needs root' }, () => {
  it('gives each machine its own address on the bridge, every agent at port 7443', () => {
    const hosts = fleet.machines.map((m) => new URL(m.endpoint));
    const subnet = network.record()?.subnet ?? '';
    const prefix = subnet.replace(/\.0\/24$/, '.');
    assert.match(subnet, /^10\.231\.\d+\.0\/24$/);
    assert.equal(new Set(hosts.map((h) => h.hostname)).size, 4, 'four addresses');
    for (const h of hosts) {
      assert.ok(h.hostname.startsWith(prefix), `${h.hostname} is in ${subnet}`);
      assert.equal(h.port, '7443');
    }
    assert.equal(network.hostAddress, `${prefix}1`);
    assert.ok(fleet.registry.host.startsWith(`${prefix}1:`), 'the registry is on the bridge');
  });

  it('forms the etcd cluster across the namespaces, each member at its machine address', async () => {
    for (const [i, e] of fleet.storeEndpoints.entries())
      assert.equal(e, `http://${new URL(fleet.machines[i]?.endpoint ?? '').hostname}:2379`);
    await waitClusterHealthy(fleet.storeEndpoints, 30_000);
  });

  it('runs each machine in its own namespace, listening there at its address', async () => {
    const worker = fleet.workers[0];
    assert.ok(worker !== undefined);
    const address = new URL(worker.endpoint).hostname;
    assert.equal(await accepts(address, 7443), true, 'the agent answers at its address');
    const namespaceOf = (pid: number | 'self'): Promise<string> =>
      readlink(`/proc/${String(pid)}/ns/net`);
    const mine = await namespaceOf('self');
    const theirs = await Promise.all(fleet.all.map((m) => namespaceOf(m.process.pid)));
    assert.ok(!theirs.includes(mine), 'no machine runs in the host’s namespace');
    assert.equal(new Set(theirs).size, 4, 'each machine has a namespace of its own');
    const ns = network.record()?.namespaces.find((n) => n.endsWith('-w-1')) ?? '';
    const listening = (await run('ip', ['netns', 'exec', ns, 'ss', '-Hltn'])).stdout;
    assert.ok(listening.includes(`${address}:7443`), listening);
    const onHost = (await run('ss', ['-Hltn'])).stdout;
    assert.ok(
      !onHost.includes(`${address}:7443`),
      'the agent does not listen in the host’s namespace',
    );
  });

  it('upgrades a worker from the registry on the bridge, through its address', async () => {
    const worker = fleet.workers[0];
    assert.ok(worker !== undefined);
    await fleet.publish('1.1.0', {});
    const r = await worker.molt(['node', 'upgrade', '--image', fleet.image('1.1.0'), '--follow']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await worker.status()).version, '1.1.0');
  });

  it('gives a VM a tap on the bridge and an address of its own, which QEMU opens', async () => {
    const port = await network.vmPort('vm-1');
    assert.ok(port !== undefined);
    assert.deepEqual(await network.vmPort('vm-1'), port, 'the same port when asked again');
    const machines = fleet.machines.map((m) => new URL(m.endpoint).hostname);
    assert.ok(!machines.includes(port.address), `${port.address} is not a machine's`);
    assert.match(port.address, new RegExp(`^${network.hostAddress.replace(/1$/, '')}\\d+$`));
    assert.match(port.tap.mac, /^52:54:00:e7:[0-9a-f]{2}:[0-9a-f]{2}$/);
    const link = async (): Promise<string> =>
      (await run('ip', ['-o', 'link', 'show', port.tap.ifname])).stdout;
    assert.match(await link(), new RegExp(`master ${network.record()?.bridge ?? '?'} `));
    assert.match(await link(), /NO-CARRIER/, 'nothing holds the tap yet');
    const disk = join(scratch.path, 'vm-1.img');
    await writeFile(disk, Buffer.alloc(1024 * 1024)); // nothing to boot: QEMU only holds the NIC
    const vm = await startVm({
      name: 'vm-1',
      dir: join(scratch.path, 'vm-1'),
      disk,
      tap: port.tap,
    });
    try {
      assert.doesNotMatch(await link(), /NO-CARRIER/, 'QEMU holds the tap');
    } finally {
      await vm.stop();
    }
  });

  it('removes every namespace, tap and the bridge', async () => {
    const made = network.record();
    assert.ok(made !== undefined);
    assert.equal(made.namespaces.length, 4);
    assert.equal(made.taps?.length, 1);
    await stopFleet();
    await network.remove();
    const namespaces = (await run('ip', ['netns', 'list'])).stdout;
    for (const ns of made.namespaces) assert.ok(!namespaces.includes(ns), `${ns} is gone`);
    const links = (await run('ip', ['-o', 'link', 'show'])).stdout;
    for (const tap of made.taps ?? []) assert.ok(!links.includes(`${tap}:`), `${tap} is gone`);
    assert.ok(!links.includes(`${made.bridge}:`), `${made.bridge} is gone`);
  });
});
