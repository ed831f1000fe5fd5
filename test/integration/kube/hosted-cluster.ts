// SPDX-License-Identifier: Apache-2.0
// A Kubernetes cluster hosted by three lab control-plane machines (docs/adr/0006 §10, 0012 §3):
// each agent runs an etcd 3.5 member and the three control-plane components (its config's
// `controlPlane`: kube-apiserver, and kube-controller-manager and kube-scheduler electing
// leaders) as its machine's services, and a loopback TCP balancer stands in front of the three
// API servers. `rollingUpgrade` upgrades the machines one at a time (through `molt node upgrade`, as an
// operator would) while a client keeps writing through the balancer and a monitor watches etcd's
// quorum — the P8 benchmark and its test share it.
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { Etcd3 } from 'etcd3';
import { createRegistryClient } from '../../../src/oci/index.ts';
import { loadKubeConfig } from '../../../src/platform/kube/client.ts';
import { pushInstallerImage } from '../../../src/testkit/installer-image.ts';
import {
  startKubeControlPlane,
  type KubeControlPlane,
} from '../../../src/lab/services/kube-control-plane.ts';
import { freePort } from '../../../src/platform/process/free-port.ts';
import { tempDir } from '../../../src/platform/process/managed-process.ts';
import { startRegistry, type RunningRegistry } from '../../../src/testkit/registry-process.ts';
import { startTcpBalancer, type TcpBalancer } from '../../../src/testkit/tcp-balancer.ts';
import {
  startControlPlaneCluster,
  waitClusterHealthy,
  type ControlPlaneCluster,
} from '../../../src/lab/fleet/control-plane.ts';
import { createFleetPki, type FleetPki } from '../lab/harness.ts';
import { moltArgv } from '../../../src/testkit/molt-entry.ts';

const repo = 'molt/installer';

export interface HostedCluster {
  readonly kube: KubeControlPlane;
  readonly machines: ControlPlaneCluster;
  readonly balancer: TcpBalancer;
  readonly image: (version: string) => string;
  /** The test registry (`host:port`, plain HTTP): publish Kubernetes bundles there. */
  readonly registry: string;
  /** Each machine's API server port, in machine order (cp-1 first). */
  readonly apiserverPorts: readonly number[];
  /** The fleet's CA and the operator's certificate (what calls the agents). */
  readonly pki: FleetPki;
  stop(): Promise<void>;
}

export interface HostedClusterOptions {
  /** The Kubernetes version the machines start on. @default kube-versions.env's */
  readonly version?: string;
  /** How long an applied component may take to become healthy. @default the agent's (90 s) */
  readonly healthTimeoutSeconds?: number;
}

export async function startHostedCluster(o: HostedClusterOptions = {}): Promise<HostedCluster> {
  const registry: RunningRegistry = await startRegistry();
  const scratch = await tempDir('kube-hosted');
  const ports = [await freePort(), await freePort(), await freePort()];
  const balancer = await startTcpBalancer(ports);
  let machines: ControlPlaneCluster | undefined;
  let kube: KubeControlPlane | undefined;
  const stop = async (): Promise<void> => {
    await kube?.stop();
    await machines?.stop();
    await balancer.close();
    await registry.stop();
    await scratch.remove();
  };
  const image = (version: string): string => `${registry.host}/${repo}:${version}`;
  let pki: FleetPki | undefined;
  try {
    const client = createRegistryClient({ registry: registry.host, insecure: true });
    for (const version of ['1.0.0', '1.1.0'])
      await pushInstallerImage(client, repo, version, { version });
    await client.close();
    const fleet = await createFleetPki(join(scratch.path, 'pki'));
    pki = fleet;
    kube = await startKubeControlPlane({
      ...(o.version !== undefined && { version: o.version }),
      hostApiservers: async (setup) => {
        const kubeconfig = await setup.controllersKubeconfig(`https://${balancer.address}`);
        const own = new Map<string, { kcm: number; scheduler: number }>();
        for (const name of ['cp-1', 'cp-2', 'cp-3'])
          own.set(name, { kcm: await freePort(), scheduler: await freePort() });
        machines = await startControlPlaneCluster({
          molt: moltArgv,
          dir: scratch.path,
          pki: fleet,
          image: image('1.0.0'),
          // The API server needs etcd 3.5; Debian's is 3.4.
          etcdBinary: join(setup.bins, 'etcd'),
          healthDeadlineSeconds: 60,
          extra: ({ name, root, endpoints }) => ({
            controlPlane: {
              binaries: setup.bins,
              ...(setup.version !== undefined && { version: setup.version }),
              ...(o.healthTimeoutSeconds !== undefined && {
                healthTimeoutSeconds: o.healthTimeoutSeconds,
              }),
              components: setup.components({
                etcd: endpoints,
                ports: {
                  'kube-apiserver': ports[Number(name.slice(3)) - 1] ?? 0,
                  'kube-controller-manager': own.get(name)?.kcm ?? 0,
                  'kube-scheduler': own.get(name)?.scheduler ?? 0,
                },
                kubeconfig,
                dir: join(root, 'ephemeral', 'kube'),
              }),
            },
          }),
        });
        return `https://${balancer.address}`;
      },
    });
  } catch (e) {
    await stop();
    throw e;
  }
  if (machines === undefined) throw new Error('unreachable: the machines host the API servers');
  return {
    kube,
    machines,
    balancer,
    image,
    registry: registry.host,
    apiserverPorts: ports,
    pki,
    stop,
  };
}

export interface WriteReport {
  /** Writes attempted (one ConfigMap each). */
  readonly writes: number;
  /** Writes that did not succeed within their retry budget. */
  readonly failed: number;
  /** Attempts that failed and were retried (connections cut by a rebooting API server). */
  readonly retries: number;
  /** The longest a write took, its retries included, in milliseconds. */
  readonly slowestMs: number;
  readonly lastError: string | undefined;
}

/**
 * Create a ConfigMap every `everyMs` through the balancer until stopped. A write whose attempt
 * fails is retried (a reconnect to another API server) for up to `budgetMs`; a retry that finds
 * the ConfigMap already there (its first attempt landed, the answer was lost) counts as written.
 * The budget is longer than etcd's own request timeout (5 s plus two election timeouts): on a
 * host shared with VMs one attempt may wait that long and answer `etcdserver: request timed out`
 * with quorum intact, and a client that gives up before the server does measures the host, not
 * the upgrade. The quorum watch is what tells a lost quorum.
 */
export function startKubeWriter(
  kc: KubeConfig,
  namespace: string,
  everyMs = 100,
  budgetMs = 15_000,
): { stop(): Promise<WriteReport> } {
  const core = kc.makeApiClient(CoreV1Api);
  const state = {
    running: true,
    writes: 0,
    failed: 0,
    retries: 0,
    slowestMs: 0,
    lastError: undefined as string | undefined,
  };
  const running = (): boolean => state.running;
  const write = async (name: string): Promise<void> => {
    const deadline = performance.now() + budgetMs;
    for (;;) {
      try {
        await core.createNamespacedConfigMap({
          namespace,
          body: { metadata: { name }, data: { n: name } },
        });
        return;
      } catch (e) {
        if ((e as { code?: number }).code === 409) return;
        state.lastError = e instanceof Error ? e.message : String(e);
        if (performance.now() > deadline) {
          state.failed++;
          return;
        }
        state.retries++;
        await sleep(100);
      }
    }
  };
  const timed = async (name: string): Promise<void> => {
    const started = performance.now();
    await write(name);
    state.slowestMs = Math.max(state.slowestMs, Math.round(performance.now() - started));
  };
  const loop = (async () => {
    for (let n = 0; running(); n++) {
      state.writes++;
      await timed(`w-${String(n).padStart(6, '0')}`);
      await sleep(everyMs);
    }
  })();
  return {
    async stop() {
      state.running = false;
      await loop;
      return {
        writes: state.writes,
        failed: state.failed,
        retries: state.retries,
        slowestMs: state.slowestMs,
        lastError: state.lastError,
      };
    },
  };
}

/** What {@link watchQuorum} saw. */
export interface QuorumReport {
  /** The fewest members that answered and knew a leader at one poll. */
  readonly fewest: number;
  /** The most polls in a row at which fewer than a quorum (2 of 3) of members knew a leader. */
  readonly longestBadRun: number;
  readonly polls: number;
  /** What each member answered at the polls of the longest bad run (or the worst poll). */
  readonly worst: string;
}

/**
 * Poll every member's status every 200 ms and count the members that answered and knew a leader.
 *
 * A change of leader — etcd's hand-over when its leader stops gracefully, or an election — leaves
 * followers without a leader for a moment, until the new leader's first heartbeat (100 ms here),
 * and one poll may land in it: CI saw "leader L; <the rebooting member> unreachable; leader 0".
 * Quorum is lost when members stay without a leader, and then every later poll shows it (tried:
 * with two of three members stopped, 20 polls in a row). So the test asks that at no two polls in
 * a row fewer than two members knew a leader. Each answer may take 2 s: on a loaded CI machine a
 * member with a leader can take longer than 500 ms, and a late answer is not a lost quorum.
 */
export function watchQuorum(endpoints: readonly string[]): { stop(): Promise<QuorumReport> } {
  const clients = endpoints.map((e) => new Etcd3({ hosts: [e], dialTimeout: 2_000 }));
  const started = performance.now();
  const state = {
    running: true,
    fewest: endpoints.length,
    run: [] as string[],
    longest: [] as string[],
    polls: 0,
    worst: 'every member led',
  };
  const running = (): boolean => state.running;
  const loop = (async () => {
    while (running()) {
      const answers = await Promise.all(
        clients.map((c, i) =>
          c.maintenance.status({ deadline: Date.now() + 2_000 }).then(
            (s) => ({ led: s.leader !== '0', text: `${endpoints[i] ?? ''} leader ${s.leader}` }),
            (e: unknown) => ({ led: false, text: `${endpoints[i] ?? ''} ${String(e)}` }),
          ),
        ),
      );
      const led = answers.filter((a) => a.led).length;
      const seen = `at ${((performance.now() - started) / 1000).toFixed(1)} s: ${answers.map((a) => a.text).join('; ')}`;
      if (led < state.fewest) state.worst = seen;
      state.fewest = Math.min(state.fewest, led);
      state.run = led < 2 ? [...state.run, seen] : [];
      if (state.run.length > state.longest.length) state.longest = state.run;
      state.polls++;
      await sleep(200);
    }
  })();
  return {
    async stop() {
      state.running = false;
      await loop;
      for (const c of clients) c.close();
      return {
        fewest: state.fewest,
        longestBadRun: state.longest.length,
        polls: state.polls,
        worst: state.longest.length > 0 ? state.longest.join(' | ') : state.worst,
      };
    },
  };
}

export interface RollingReport extends WriteReport {
  readonly fewestWithLeader: number;
  /** The most polls in a row at which fewer than two members knew a leader (see watchQuorum). */
  readonly longestBadRun: number;
  /** What the members answered at those polls. */
  readonly worstPoll: string;
  readonly seconds: number;
  /** Each machine's `molt node upgrade` exit code and stderr. */
  readonly upgrades: readonly { name: string; code: number; stderr: string }[];
}

/** Upgrade the machines to `version` one at a time while writing; see the module comment. */
export async function rollingUpgrade(c: HostedCluster, version: string): Promise<RollingReport> {
  const admin = await loadKubeConfig(c.kube.admin.kubeconfig);
  const core = admin.makeApiClient(CoreV1Api);
  const ns = `p8-${String(Date.now())}`;
  await core.createNamespace({ body: { metadata: { name: ns } } });
  const started = performance.now();
  const writer = startKubeWriter(admin, ns);
  const quorum = watchQuorum(c.machines.endpoints);
  const upgrades: { name: string; code: number; stderr: string }[] = [];
  const upgradeAll = async (): Promise<void> => {
    for (const m of c.machines.machines) {
      const r = await m.molt([
        'node',
        'upgrade',
        '--image',
        c.image(version),
        '--follow',
        '-o',
        'json',
      ]);
      upgrades.push({ name: m.name, code: r.code, stderr: r.stderr });
      if (r.code !== 0) return;
      await waitClusterHealthy(c.machines.endpoints, 60_000);
    }
  };
  // Writer and monitor stop whatever happens, so a failed upgrade still reports what they saw.
  const outcome = await upgradeAll().then(
    () => undefined,
    (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
  );
  const q = await quorum.stop();
  const w = await writer.stop();
  if (outcome !== undefined) throw outcome;
  return {
    ...w,
    fewestWithLeader: q.fewest,
    longestBadRun: q.longestBadRun,
    worstPoll: q.worst,
    seconds: (performance.now() - started) / 1000,
    upgrades,
  };
}
