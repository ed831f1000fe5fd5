// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { MachineConfig } from '../../protocol/machine-config.ts';
import { networkdFiles } from './networkd.ts';

const ImageNetworkDir = '../../../deploy/image/rootfs/etc/systemd/network';
const base = { node: 'vm-1', role: 'worker', bootloader: 'grub' } as const;
const nic = {
  mac: '52:54:00:e7:03:0b',
  addresses: ['10.231.3.11/24'],
  routes: [{ to: '10.244.2.0/24', via: '10.231.3.12' }],
};

/** The first issue zod finds in `network`, as `path: message`. */
function refused(network: unknown): string {
  const r = MachineConfig.safeParse({ ...base, network });
  assert.equal(r.success, false, JSON.stringify(network));
  const i = r.error.issues[0];
  return `${i?.path.join('.') ?? ''}: ${i?.message ?? ''}`;
}

describe('the machine config’s network as networkd files', () => {
  it('matches each NIC by MAC, before the image’s DHCP file, with its addresses and routes', async () => {
    const config = MachineConfig.parse({ ...base, network: { interfaces: [nic] } });
    const files = networkdFiles(config.network);
    assert.deepEqual(Object.keys(files), ['10-molt-0.network']);
    const image = await readdir(join(import.meta.dirname, ImageNetworkDir));
    assert.ok(image.length > 0);
    for (const f of image) assert.ok('10-molt-0.network' < f, `sorts before the image's ${f}`);
    const text = files['10-molt-0.network'] ?? '';
    assert.match(text, /^\[Match\]\nMACAddress=52:54:00:e7:03:0b\n/m);
    assert.match(text, /^\[Network\]\nAddress=10\.231\.3\.11\/24\nDHCP=no\n/m);
    assert.match(text, /^\[Route\]\nDestination=10\.244\.2\.0\/24\nGateway=10\.231\.3\.12\n/m);
  });

  it('renders nothing without a network section, and routes are optional', () => {
    assert.deepEqual(networkdFiles(MachineConfig.parse(base).network), {});
    const bare = MachineConfig.parse({
      ...base,
      network: { interfaces: [{ mac: nic.mac, addresses: nic.addresses }] },
    });
    assert.doesNotMatch(networkdFiles(bare.network)['10-molt-0.network'] ?? '', /\[Route\]/);
  });

  it('says what is wrong with each field', () => {
    assert.match(refused({ interfaces: [] }), /^network\.interfaces: must name at least one/);
    assert.match(refused({ interfaces: [{ ...nic, mac: 'eth0' }] }), /mac: must be a MAC/);
    assert.match(refused({ interfaces: [{ ...nic, mac: '52:54:00:E7:03:0B' }] }), /mac/);
    assert.match(
      refused({ interfaces: [{ ...nic, addresses: ['10.231.3.11'] }] }),
      /addresses\.0: must be an IPv4 address with its prefix length/,
    );
    assert.match(refused({ interfaces: [{ ...nic, addresses: [] }] }), /at least one address/);
    assert.match(
      refused({ interfaces: [{ ...nic, routes: [{ to: '10.244.2.1/24', via: '10.231.3.12' }] }] }),
      /routes\.0\.to: .*no host bits/,
    );
    assert.match(
      refused({ interfaces: [{ ...nic, routes: [{ to: '10.244.2.0/24', via: 'gw' }] }] }),
      /routes\.0\.via: must be an IPv4 address/,
    );
    assert.match(refused({ interfaces: [nic, nic] }), /names a MAC address twice/);
    assert.match(refused({ interfaces: [{ ...nic, name: 'eth1' }] }), /name/);
  });
});
