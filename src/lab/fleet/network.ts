// SPDX-License-Identifier: Apache-2.0
/**
 * Where lab machines live on the network (docs/adr/0007 §7).
 *
 * - `loopback` (any user): every machine listens on 127.0.0.1, each at ports of its own.
 * - `netns` (root): each machine gets a network namespace `molt<N>-<name>` and an address
 *   `10.231.<N>.<k>` on a bridge `moltbr<N>`, whose host side `10.231.<N>.1` is where the host's
 *   services (registry, Kubernetes API) listen. Machines then listen on the same well-known ports
 *   at addresses of their own, as real machines do, and a machine's agent, etcd member and API
 *   server are reachable only through its address. The bridge is not connected to any physical
 *   interface and nothing is routed or forwarded, so the lab stays on this host.
 *
 * Made with `ip` (iproute2): nothing else creates namespaces. What a netns network made is recorded
 * in `<lab dir>/network.json` before it is made, so `molt lab down` can remove it even after the
 * lab daemon was killed.
 */
import { execFile } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { freePort } from '../../platform/process/free-port.ts';

const run = promisify(execFile);

export type NetworkMode = 'loopback' | 'netns';

/** The services a lab machine runs that listen on the network. */
export type MachinePort = 'api' | 'etcd-client' | 'etcd-peer';

/** The ports every machine uses in `netns` mode (loopback gives each machine free ports). */
const WellKnown: Readonly<Record<MachinePort, number>> = {
  api: 7443,
  'etcd-client': 2379,
  'etcd-peer': 2380,
};

export interface MachineAddress {
  readonly name: string;
  readonly address: string;
  /** The argv prefix that runs a command inside the machine's namespace (empty on loopback). */
  readonly exec: readonly string[];
}

/** A VM's port on the lab bridge: a tap device QEMU opens, and the address the VM takes. */
export interface VmPort {
  readonly name: string;
  /** `a.b.c.d` on the bridge's /24. */
  readonly address: string;
  readonly tap: { readonly ifname: string; readonly mac: string };
}

/** What a netns network consists of: enough to remove it. */
export interface NetworkRecord {
  readonly bridge: string;
  readonly subnet: string;
  readonly namespaces: readonly string[];
  /** Tap devices made for VMs (absent in records written before VMs joined the bridge). */
  readonly taps?: readonly string[];
}

export interface LabNetwork {
  readonly mode: NetworkMode;
  /** Where the host's services listen so machines reach them. */
  readonly hostAddress: string;
  /** The bridge and namespaces made so far (netns mode). */
  record(): NetworkRecord | undefined;
  /** Machine `name`'s address, made on first use; the same one on later calls (a re-image). */
  machine(name: string): Promise<MachineAddress>;
  /**
   * VM `name`'s port on the bridge, made on first use (the same on later calls); undefined on
   * loopback, where a VM has only QEMU's user network.
   */
  vmPort(name: string): Promise<VmPort | undefined>;
  /** The port `service` of a machine listens on. */
  port(service: MachinePort): Promise<number>;
  /**
   * Route `to` (a CIDR) from the host through `via` on the bridge (netns mode; it goes with the
   * bridge). Refused when the host already routes `to`: another lab's VMs claim it.
   */
  route(to: string, via: string): Promise<void>;
  /** Remove the namespaces and the bridge (netns mode); idempotent. */
  remove(): Promise<void>;
}

/**
 * Every machine on 127.0.0.1 at free ports. A port is free once it is closed again, so the kernel
 * may hand the same one out twice in a row: the ports given out are remembered, and a repeat is
 * asked for again (CI once saw two machines' ports collide).
 */
export function loopbackNetwork(o: { readonly freePort?: () => Promise<number> } = {}): LabNetwork {
  const given = new Set<number>();
  const ask = o.freePort ?? freePort;
  const port = async (): Promise<number> => {
    for (let tries = 0; tries < 100; tries++) {
      const p = await ask();
      if (!given.has(p)) {
        given.add(p);
        return p;
      }
    }
    throw new MoltError(ErrorCode.Internal, 'no free port on 127.0.0.1 after 100 tries');
  };
  return {
    mode: 'loopback',
    hostAddress: '127.0.0.1',
    record: () => undefined,
    machine: (name) => Promise.resolve({ name, address: '127.0.0.1', exec: [] }),
    vmPort: () => Promise.resolve(undefined),
    port,
    route: (to) =>
      Promise.reject(
        new MoltError(ErrorCode.LabFailed, `a loopback lab has no bridge to route ${to} through`),
      ),
    remove: () => Promise.resolve(),
  };
}

/** The `--network` flag's value, or MOLT_BAD_FLAG naming the choices. */
export function parseNetworkFlag(value: string): NetworkMode | 'auto' {
  if (value === 'auto' || value === 'netns' || value === 'loopback') return value;
  throw new MoltError(
    ErrorCode.BadFlag,
    `--network must be auto, netns or loopback, not ${JSON.stringify(value)}`,
  );
}

/** `auto`: netns when running as root with `ip` available, loopback otherwise. */
export async function chooseNetworkMode(asked: NetworkMode | 'auto'): Promise<NetworkMode> {
  const root = process.getuid?.() === 0;
  if (asked === 'netns' && !root)
    throw new MoltError(ErrorCode.BadFlag, 'network namespaces (--network netns) need root', {
      hint: 'run as root, or use --network loopback',
    });
  if (asked !== 'auto') return asked;
  if (!root) return 'loopback';
  return (await ip(['-V']).then(
    () => true,
    () => false,
  ))
    ? 'netns'
    : 'loopback';
}

async function ip(args: readonly string[]): Promise<string> {
  try {
    return (await run('ip', [...args])).stdout;
  } catch (e) {
    const stderr = (e as { stderr?: string }).stderr?.trim() ?? String(e);
    throw new MoltError(ErrorCode.LabFailed, `ip ${args.join(' ')}: ${stderr}`, {
      hint:
        process.getuid?.() === 0
          ? 'is iproute2 installed? (`apt-get install iproute2`)'
          : 'network namespaces need root; use `--network loopback`',
    });
  }
}

const networkFile = (dir: string): string => join(dir, 'network.json');

/** Indices N whose bridge name and subnet no interface here uses yet, lowest first. */
async function freeIndices(): Promise<number[]> {
  const links = await ip(['-o', 'link', 'show']);
  const addresses = await ip(['-o', '-4', 'addr', 'show']);
  return Array.from({ length: 256 }, (_, n) => n).filter(
    (n) => !links.includes(`moltbr${String(n)}:`) && !addresses.includes(`10.231.${String(n)}.`),
  );
}

/**
 * Claim a bridge: creating the link is the atomic step, so two labs starting at once (tests run in
 * parallel) cannot both take the same N — the loser moves on to the next free one.
 */
async function claimBridge(dir: string): Promise<{ n: number; bridge: string; subnet: string }> {
  for (const n of await freeIndices()) {
    const claim = { n, bridge: `moltbr${String(n)}`, subnet: `10.231.${String(n)}.0/24` };
    const { bridge, subnet } = claim;
    await writeFile(networkFile(dir), JSON.stringify({ bridge, subnet, namespaces: [] }));
    const made = await ip(['link', 'add', bridge, 'type', 'bridge']).then(
      () => true,
      (e: unknown) => {
        if (e instanceof MoltError && /File exists/i.test(e.message)) return false;
        throw e;
      },
    );
    if (made) return claim;
  }
  await rm(networkFile(dir), { force: true });
  throw new MoltError(ErrorCode.LabFailed, 'no free 10.231.N.0/24 subnet for a lab network', {
    hint: 'remove old lab bridges (`ip link show type bridge`, named moltbrN)',
  });
}

/**
 * Make a netns network for the lab in `dir` (root only): the bridge now, a namespace per machine
 * on first use. Its record is kept in `dir/network.json` as it grows.
 */
export async function createNetnsNetwork(dir: string): Promise<LabNetwork> {
  const { n, bridge, subnet } = await claimBridge(dir);
  const prefix = `10.231.${String(n)}`;
  const state = { bridge, subnet, namespaces: [] as string[], taps: [] as string[] };
  const machines = new Map<string, MachineAddress>();
  const vms = new Map<string, VmPort>();
  const save = (): Promise<void> => writeFile(networkFile(dir), JSON.stringify(state));
  await ip(['addr', 'add', `${prefix}.1/24`, 'dev', state.bridge]);
  await ip(['link', 'set', state.bridge, 'up']);
  // Machines and VMs share the /24, from .11 on; counted before any await, so two asked at
  // once never share a number.
  let hosts = 10;
  const nextHost = (): number => {
    const host = ++hosts;
    if (host > 250)
      throw new MoltError(ErrorCode.LabFailed, 'a lab network holds at most 240 machines');
    return host;
  };
  const addMachine = async (name: string): Promise<MachineAddress> => {
    const netns = `molt${String(n)}-${name}`;
    const veth = `m${String(n)}-${name}`.slice(0, 15);
    const address = `${prefix}.${String(nextHost())}`;
    state.namespaces.push(netns);
    await save();
    await ip(['netns', 'add', netns]);
    await ip(['link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', netns]);
    await ip(['link', 'set', veth, 'master', state.bridge, 'up']);
    await ip(['-n', netns, 'addr', 'add', `${address}/24`, 'dev', 'eth0']);
    await ip(['-n', netns, 'link', 'set', 'eth0', 'up']);
    await ip(['-n', netns, 'link', 'set', 'lo', 'up']);
    return { name, address, exec: ['ip', 'netns', 'exec', netns] };
  };
  const addVm = async (name: string): Promise<VmPort> => {
    const host = nextHost();
    const ifname = `t${String(n)}-${name}`.slice(0, 15);
    // QEMU's prefix 52:54:00, then the lab's index and the host number: unique on this host.
    const hex = (x: number): string => x.toString(16).padStart(2, '0');
    const mac = `52:54:00:e7:${hex(n)}:${hex(host)}`;
    state.taps.push(ifname);
    await save();
    await ip(['tuntap', 'add', 'dev', ifname, 'mode', 'tap']);
    await ip(['link', 'set', ifname, 'master', state.bridge, 'up']);
    return { name, address: `${prefix}.${String(host)}`, tap: { ifname, mac } };
  };
  const remember = <T>(known: Map<string, T>, name: string, made: T): T => {
    known.set(name, made);
    return made;
  };
  return {
    mode: 'netns',
    hostAddress: `${prefix}.1`,
    record: () => ({ ...state, namespaces: [...state.namespaces], taps: [...state.taps] }),
    machine: async (name) => machines.get(name) ?? remember(machines, name, await addMachine(name)),
    vmPort: async (name) => vms.get(name) ?? remember(vms, name, await addVm(name)),
    port: (service) => Promise.resolve(WellKnown[service]),
    route: async (to, via) => {
      await ip(['route', 'add', to, 'via', via, 'dev', state.bridge]).catch((e: unknown) => {
        throw new MoltError(
          ErrorCode.LabFailed,
          `cannot route ${to} via ${via}: ${(e as Error).message}`,
          {
            hint: 'another lab on this host may route the same pod subnets (`ip route`): stop it first',
            cause: e,
          },
        );
      });
    },
    remove: () => removeNetwork(dir).then(() => undefined),
  };
}

/**
 * Remove what `dir/network.json` records (namespaces, then the bridge); false when there is no
 * record (a loopback lab, or one already removed).
 */
export async function removeNetwork(dir: string): Promise<boolean> {
  const text = await readFile(networkFile(dir), 'utf8').catch(() => undefined);
  if (text === undefined) return false;
  const record = JSON.parse(text) as NetworkRecord;
  // Deleting a namespace deletes its veth end, and with it the peer on the bridge.
  for (const netns of record.namespaces) await ip(['netns', 'del', netns]).catch(() => undefined);
  // A tap made with `ip tuntap add` outlives its QEMU and is not removed with its bridge.
  for (const tap of record.taps ?? []) await ip(['link', 'del', tap]).catch(() => undefined);
  await ip(['link', 'del', record.bridge]).catch(() => undefined);
  await rm(networkFile(dir), { force: true });
  return true;
}
