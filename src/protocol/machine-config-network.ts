// SPDX-License-Identifier: Apache-2.0
/**
 * `network` of a machine config: static addresses and routes on NICs chosen by their MAC address,
 * for networks without DHCP (a lab's VM bridge, a rack's node network). `molt install` renders
 * them as systemd-networkd files on STATE (image/install/networkd.ts); the image hands them to
 * networkd before it starts (molt-network.service). NICs not named here keep DHCP.
 */
import { z } from 'zod';
import { Ipv4Address, Ipv4Cidr, Ipv4Interface } from './ipv4.ts';

const Route = z
  .object({
    /** The destination network. */
    to: Ipv4Cidr,
    /** The next hop, on the interface's own network. */
    via: Ipv4Address,
  })
  .strict();

const Interface = z
  .object({
    /** The NIC, by its hardware address (names change with the bus; a MAC does not). */
    mac: z
      .string()
      .regex(/^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/, 'must be a MAC address like 52:54:00:e7:00:0b'),
    addresses: z.array(Ipv4Interface).min(1, 'must give at least one address').max(16),
    routes: z.array(Route).max(1024).default([]),
  })
  .strict();

export const NetworkConfig = z
  .object({
    interfaces: z.array(Interface).min(1, 'must name at least one interface').max(16),
  })
  .strict()
  .refine((n) => new Set(n.interfaces.map((i) => i.mac)).size === n.interfaces.length, {
    message: 'names a MAC address twice',
    path: ['interfaces'],
  });
export type NetworkConfig = z.infer<typeof NetworkConfig>;
