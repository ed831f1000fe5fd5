// SPDX-License-Identifier: Apache-2.0
/**
 * The machine config's `network` as systemd-networkd files for `/molt/state/network/`: one
 * `.network` a NIC, matched by MAC, named to sort before the image's DHCP file
 * (deploy/image/rootfs/etc/systemd/network/80-molt-dhcp.network), so a NIC named here gets its
 * static addresses and routes and every other NIC keeps DHCP. molt-network.service copies them
 * into /run/systemd/network before networkd starts: the root is read-only, STATE is not.
 */
import type { NetworkConfig } from '../../protocol/machine-config-network.ts';

/** Where on the machine the files live (under STATE). */
export const NetworkDir = '/molt/state/network';

/** `{file name: content}` for `network`; empty when the config has none. */
export function networkdFiles(network: NetworkConfig | undefined): Record<string, string> {
  const files: Record<string, string> = {};
  for (const [i, nic] of (network?.interfaces ?? []).entries()) {
    const lines = [
      '# molt install: from the machine config (network.interfaces).',
      '[Match]',
      `MACAddress=${nic.mac}`,
      '',
      '[Network]',
      ...nic.addresses.map((a) => `Address=${a}`),
      // The NIC is up and addressed whatever else happens: no DHCP, no link-local, no waiting
      // on an address that another protocol would assign.
      'DHCP=no',
      'LinkLocalAddressing=no',
      'IPv6AcceptRA=no',
      ...nic.routes.flatMap((r) => ['', '[Route]', `Destination=${r.to}`, `Gateway=${r.via}`]),
    ];
    files[`10-molt-${String(i)}.network`] = `${lines.join('\n')}\n`;
  }
  return files;
}
