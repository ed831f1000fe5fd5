// SPDX-License-Identifier: Apache-2.0
/** IPv4 addresses and networks in machine configs, checked as zod strings. */
import { z } from 'zod';

/** The four octets of `a.b.c.d`, or undefined when it is not an IPv4 address. */
function octets(s: string): number[] | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  const parts = m?.slice(1, 5).map(Number);
  return parts?.every((o) => o <= 255) === true ? parts : undefined;
}

/** `[address, prefix]` of `a.b.c.d/n` with n in [min, max], or undefined. */
function split(s: string, min: number, max: number): [number, number] | undefined {
  const [address = '', prefix = ''] = s.split('/');
  const o = octets(address);
  const n = Number(prefix);
  if (o === undefined || !/^\d{1,2}$/.test(prefix) || n < min || n > max) return undefined;
  return [o.reduce((a, x) => a * 256 + x, 0), n];
}

/** `a.b.c.d`, an IPv4 address. */
export const Ipv4Address = z
  .string()
  .refine((s) => octets(s) !== undefined, { message: 'must be an IPv4 address a.b.c.d' });

/** `a.b.c.d/n`, an IPv4 network whose host bits are zero (a pod subnet, a route's destination). */
export const Ipv4Cidr = z.string().refine(
  (s) => {
    const parts = split(s, 8, 30);
    return parts !== undefined && parts[0] % 2 ** (32 - parts[1]) === 0;
  },
  {
    message:
      'must be an IPv4 network a.b.c.d/n with n from 8 to 30 and no host bits set, like 10.244.1.0/24',
  },
);

/** `a.b.c.d/n`: an address with its network's prefix length, as networkd's `Address=` takes it. */
export const Ipv4Interface = z.string().refine((s) => split(s, 8, 32) !== undefined, {
  message: 'must be an IPv4 address with its prefix length, like 10.231.0.11/24',
});
