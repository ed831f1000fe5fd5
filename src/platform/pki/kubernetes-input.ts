// SPDX-License-Identifier: Apache-2.0
/**
 * What `molt pki kubernetes` is given, checked before any key is made: the cluster's name, the
 * API server's extra names (`IP:…`, `DNS:…`, as openssl writes them), the service CIDR whose
 * first address is the `kubernetes` Service's, the DNS domain and the server URL. Each check
 * answers the value or why it is refused, so the CLI names the flag and a library caller gets
 * the same reason.
 */
import { isIP } from 'node:net';
import { isHostName, type SubjectAltName } from './certificates.ts';

/** A check's answer: the value, or the reason it is refused (a phrase after the input). */
export type Checked<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

const ok = <T>(value: T): Checked<T> => ({ ok: true, value });
const no = <T>(reason: string): Checked<T> => ({ ok: false, reason });

/**
 * A cluster name: a DNS-label-like word (dots allowed), as it goes into the CAs' subjects and the
 * kubeconfigs' cluster entries.
 */
const clusterName = /^[a-z0-9]([a-z0-9.-]{0,61}[a-z0-9])?$/;

export function checkClusterName(name: string): Checked<string> {
  return clusterName.test(name)
    ? ok(name)
    : no(
        'must be 1-63 lower-case letters, digits, dots or dashes, starting and ending with a letter or digit',
      );
}

/** `IP:<address>` or `DNS:<name>`, the form openssl and kubeadm's docs write SANs in. */
export function checkSan(flag: string): Checked<SubjectAltName> {
  const [kind, ...rest] = flag.split(':');
  const value = rest.join(':');
  if (kind?.toUpperCase() === 'IP')
    return isIP(value) === 0 ? no('is not an IP address after IP:') : ok({ type: 'ip', value });
  if (kind?.toUpperCase() === 'DNS')
    return isHostName(value) && isIP(value) === 0
      ? ok({ type: 'dns', value: value.toLowerCase() })
      : no('is not a DNS name after DNS:');
  return no('must be IP:<address> or DNS:<name>');
}

/** The cluster's DNS domain (`cluster.local`). */
export function checkDnsDomain(domain: string): Checked<string> {
  return isHostName(domain) && isIP(domain) === 0
    ? ok(domain.toLowerCase())
    : no('is not a DNS domain');
}

/** The API server's URL in the kubeconfigs: https, with a host and no user-info. */
export function checkServer(server: string): Checked<URL> {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    return no('is not a URL (https://<host>:6443)');
  }
  if (url.protocol !== 'https:') return no('must be an https:// URL');
  // A password in a kubeconfig's server would be sent nowhere useful and kept in every copy.
  if (url.username !== '' || url.password !== '') return no('must not hold a user or password');
  return ok(url);
}

/** The host of a server URL as a SAN: its IP (without IPv6 brackets) or its DNS name. */
export function serverSan(url: URL): SubjectAltName {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return isIP(host) === 0 ? { type: 'dns', value: host } : { type: 'ip', value: host };
}

/**
 * The first address of a service CIDR (`10.96.0.0/12` → `10.96.0.1`): the `kubernetes` Service's
 * ClusterIP, which the API server's certificate must name. The range must be a network address
 * and no larger than kube-apiserver accepts (a mask of at least /12 for IPv4, /108 for IPv6).
 */
export function firstServiceAddress(cidr: string): Checked<string> {
  const [address = '', prefixText, extra] = cidr.split('/');
  const ip = parseIp(address);
  if (
    ip === undefined ||
    prefixText === undefined ||
    extra !== undefined ||
    !/^\d{1,3}$/.test(prefixText)
  )
    return no('is not a CIDR (<address>/<prefix length>, as 10.96.0.0/12)');
  const prefix = Number(prefixText);
  const smallest = ip.bits === 32 ? 12 : 108;
  if (prefix < smallest || prefix > ip.bits - 2)
    return no(`must have a prefix length from /${String(smallest)} to /${String(ip.bits - 2)}`);
  const hostBits = BigInt(ip.bits - prefix);
  const network = (ip.value >> hostBits) << hostBits;
  if (network !== ip.value)
    return no(`is not a network address (${formatIp(network, ip.bits)}/${prefixText} is)`);
  return ok(formatIp(network + 1n, ip.bits));
}

function parseIp(address: string): { bits: 32 | 128; value: bigint } | undefined {
  if (isIP(address) === 4)
    return { bits: 32, value: address.split('.').reduce((a, o) => (a << 8n) | BigInt(o), 0n) };
  if (isIP(address) !== 6 || address.includes('.')) return undefined;
  const [head = '', tail] = address.split('::');
  const groups = (s: string) => (s === '' ? [] : s.split(':'));
  const h = groups(head);
  const t = tail === undefined ? [] : groups(tail);
  const all =
    tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return { bits: 128, value: all.reduce((a, g) => (a << 16n) | BigInt(parseInt(g, 16)), 0n) };
}

function formatIp(value: bigint, bits: 32 | 128): string {
  if (bits === 32) return [24n, 16n, 8n, 0n].map((s) => String((value >> s) & 0xffn)).join('.');
  const groups = Array.from({ length: 8 }, (_, i) =>
    ((value >> BigInt(112 - 16 * i)) & 0xffffn).toString(16),
  );
  // The URL parser writes an IPv6 address in its canonical, compressed form (RFC 5952).
  return new URL(`http://[${groups.join(':')}]/`).hostname.slice(1, -1);
}
