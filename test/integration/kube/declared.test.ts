// SPDX-License-Identifier: Apache-2.0
// On the real control plane: desired state as molt.dev resources. Two lab workers are
// the nodes of a real Kubernetes cluster; the fleet file names no pool and only w-1 (w-2 is a
// machine because an admin labelled its Node `node-restriction.kubernetes.io/molt-pool=workers`
// and its agent advertised itself there), so the real `molt operator` (under its least-privilege role) follows only what
// `kubectl apply` declares: a Pool
// (its release waits for the window the policy sets, and rolls out once the policy is edited), a
// MachineHold, a Rollout's `paused`/`approved` fields. The API server refuses a bad Pool with a
// message naming the field; what only the operator can judge shows as the Accepted condition; and
// deleting a Pool mid-rollout cancels its rollout and leaves no node cordoned.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, type KubeConfig, type V1Node } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { loadKubeConfig } from '../../../src/platform/kube/client.ts';
import {
  startKubeControlPlane,
  type KubeControlPlane,
} from '../../../src/lab/services/kube-control-plane.ts';
import {
  eventually,
  startProcess,
  type ManagedProcess,
} from '../../../src/platform/process/managed-process.ts';
import { moltEntry } from '../lab/harness.ts';
import { official, startLabFleet, type WorkerFleet } from '../../../src/lab/fleet/fleet.ts';
import { writeOperatorFiles } from '../../../src/lab/fleet/operator-files.ts';
import { issueOperatorApiCert } from '../../../src/lab/fleet/operator-pki.ts';
import { OperatorServingPrefix, RolloutSummaryView } from '../../../src/protocol/operator.ts';
import { moltArgv } from '../../../src/testkit/molt-entry.ts';
import {
  afterPasses,
  scrapeOperator,
  type ScrapedOperator,
} from '../../../src/testkit/reconcile-passes.ts';

const exec = promisify(execFile);
const nodes = ['w-1', 'w-2'];
const ns = 'molt-system';
const deploy = join(import.meta.dirname, '../../../deploy/kubernetes');
let cp: KubeControlPlane;
let admin: KubeConfig;
let fleet: WorkerFleet;
let operator: ManagedProcess | undefined;
let scraped: ScrapedOperator | undefined;

/** kubectl as the cluster's admin (a person applying resources); rejects with its stderr. */
async function kubectl(...args: string[]): Promise<string> {
  try {
    return (await exec(join(cp.bins, 'kubectl'), ['--kubeconfig', cp.admin.kubeconfig, ...args]))
      .stdout;
  } catch (e) {
    throw new Error((e as { stderr?: string }).stderr ?? String(e), { cause: e });
  }
}

async function apply(object: Record<string, unknown>): Promise<string> {
  const file = join(fleet.dir, `apply-${String(Date.now())}.yaml`);
  await writeFile(file, stringify({ apiVersion: 'molt.dev/v1alpha1', ...object }));
  return kubectl('apply', '-f', file);
}

const pool = (spec: Record<string, unknown>) => ({
  kind: 'Pool',
  metadata: { name: 'workers', namespace: ns },
  spec,
});

/** A window that is open one minute a year: the rollout is created, nothing starts. */
const closed = { window: { windows: [{ cron: '0 0 1 1 *', duration: '1m', timeZone: 'UTC' }] } };

const jsonpath = (kind: string, path: string, name?: string): Promise<string> =>
  kubectl('get', kind, ...(name === undefined ? [] : [name]), '-n', ns, '-o', `jsonpath=${path}`);

/** `name version phase` of every mirrored Rollout. */
const rollouts = async (): Promise<string[]> =>
  (
    await jsonpath(
      'rollouts.molt.dev',
      '{range .items[*]}{.metadata.name} {.spec.target.version} {.status.phase}{"\\n"}{end}',
    )
  )
    .trim()
    .split('\n')
    .filter((l) => l !== '');

const rolloutTo = async (version: string): Promise<{ name: string; phase: string }> => {
  const line = (await rollouts()).find((l) => l.split(' ')[1] === version);
  assert.ok(line !== undefined, `a rollout to ${version} (have ${(await rollouts()).join('; ')})`);
  const [name = '', , phase = ''] = line.split(' ');
  return { name, phase };
};

const versions = async (): Promise<Record<string, string | undefined>> => {
  const list = await admin.makeApiClient(CoreV1Api).listNode();
  return Object.fromEntries(
    list.items.map((n) => [n.metadata?.name ?? '', n.metadata?.labels?.['molt.dev/version']]),
  );
};

const condition = async (kind: string, name: string): Promise<string> =>
  jsonpath(
    kind,
    '{.status.conditions[?(@.type=="Accepted")].status} {.status.conditions[?(@.type=="Accepted")].reason}: {.status.conditions[?(@.type=="Accepted")].message}',
    name,
  );

const tail = (): string => operator?.output().slice(-2000) ?? '';
const slow = { timeoutMs: 240_000, intervalMs: 500 };

before(async () => {
  cp = await startKubeControlPlane({ nodes });
  admin = await loadKubeConfig(cp.admin.kubeconfig);
  for (const manifest of ['rbac.yaml', 'operator-rbac.yaml'])
    await kubectl('apply', '-f', join(deploy, manifest));
  fleet = await startLabFleet({
    molt: moltArgv,
    workers: 2,
    controlPlane: false,
    kubernetes: (name) => ({
      kubeconfig: cp.agent(name).kubeconfig,
      labKubelet: { kubeconfig: cp.node(name).kubeconfig },
      drain: { timeoutSeconds: 60 },
      advertise: true,
    }),
  });
  // w-2 is in no file: it is a machine because its Node is labelled with its pool.
  await kubectl('label', 'node', 'w-2', 'node-restriction.kubernetes.io/molt-pool=workers');
  const fileFleet = { ...fleet, machines: fleet.machines.filter((m) => m.id !== 'w-2') };
  const config = await writeOperatorFiles(fileFleet, {
    // No pool in the file: the machines' pool `workers` is declared as a resource.
    pools: [],
    fleetPolicies: [],
    config: {
      id: 'operator-declared',
      store: 'memory',
      // Its API, for the reconcile pass counter of /metrics.
      pki: await issueOperatorApiCert(fleet.pki.dir),
      listen: { host: '127.0.0.1', port: 0 },
      kubernetes: { kubeconfig: cp.operator.kubeconfig, namespace: ns, nodes: {} },
    },
  });
  await fleet.publish('1.1.0', { ...official, 'dev.molt.channels': 'stable' });
  operator = startProcess('molt operator', process.execPath, [
    ...[moltEntry, 'operator', '--config', config],
  ]);
  const api = (await operator.waitFor(new RegExp(`${OperatorServingPrefix}(\\S+)`), 60_000))[1];
  scraped = await scrapeOperator(api ?? '', fleet.pki.dir);
  await operator.waitFor(/leading as operator-declared/, 60_000);
});

after(async () => {
  await operator?.stop(10_000);
  await scraped?.close();
  await fleet.stop();
  await cp.stop();
});

describe('desired state as molt.dev resources, on the real control plane', () => {
  it('takes w-2 from its labelled Node, at the endpoint its agent advertised there', async () => {
    const w2 = fleet.machines.find((m) => m.id === 'w-2');
    await eventually(async () => {
      assert.equal(
        await kubectl(
          'get',
          'node',
          'w-2',
          '-o',
          'jsonpath={.metadata.annotations.molt\\.dev/agent-endpoint}',
        ),
        w2?.endpoint.replace(/\/$/, ''),
      );
      assert.match(
        await kubectl(
          'get',
          'nodeupgrades.molt.dev',
          'w-2',
          '-n',
          ns,
          '-o',
          'jsonpath={.spec.pool}',
        ),
        /^workers$/,
        tail(),
      );
    }, slow);
  });

  it('has the API server refuse a bad Pool on kubectl apply, naming the field', async (t) => {
    const refused = async (spec: Record<string, unknown>, field: RegExp, why: RegExp) => {
      await assert.rejects(apply(pool(spec)), (e: Error) => {
        t.diagnostic(e.message.trim());
        assert.match(e.message, /Invalid value|Unsupported value|Required value|Invalid/);
        assert.match(e.message, field);
        assert.match(e.message, why);
        return true;
      });
    };
    await refused(
      { channel: 'stable', policies: [{ concurrency: '150%' }] },
      /spec\.policies\[0\]\.concurrency/,
      /percentage from 0% to 100%/,
    );
    await refused(
      { channel: 'stable', promoteFrom: 'canaries' },
      /spec/,
      /a channel or promotes from another pool, not both/,
    );
    await refused(
      { channel: 'stable', policies: [{ canary: { count: 1, soak: '5 minutes' } }] },
      /spec\.policies\[0\]\.canary\.soak/,
      /should match|must be a duration/,
    );
    await refused(
      { channel: 'stable', policies: [{ concurrency: 1, failureBudget: 2 }] },
      /spec\.policies\[0\]/,
      /at most 1 item|must have at most 1 propert/,
    );
    await refused({ strategy: 'replace' }, /spec\.strategy/, /needs a provider/);
    assert.equal((await kubectl('get', 'pools.molt.dev', '-n', ns)).trim(), '');
  });

  it('accepts a KubernetesCluster, and has the API server refuse a bad one, naming the field', async () => {
    const cluster = (spec: Record<string, unknown>) => ({
      apiVersion: 'molt.dev/v1alpha1',
      kind: 'KubernetesCluster',
      metadata: { name: 'default', namespace: ns },
      spec,
    });
    await assert.rejects(apply(cluster({ version: '1.36' })), /spec\.version: Invalid value/);
    await assert.rejects(
      apply(cluster({ version: 'v1.36.3', apiserver: { extraArgs: { '--v': '4' } } })),
      /spec\.apiserver\.extraArgs: Invalid value.*flag names without dashes/s,
    );
    await apply(cluster({ version: 'v1.36.3', apiserver: { extraArgs: { v: '2' } } }));
    await eventually(
      async () => {
        const reason = await kubectl(
          'get',
          'kubernetescluster',
          'default',
          '-n',
          ns,
          '-o',
          "jsonpath={.status.conditions[?(@.type=='Accepted')].reason}",
        );
        assert.equal(reason, 'Accepted');
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    await kubectl('delete', 'kubernetescluster', 'default', '-n', ns);
  });

  it('accepts an ImagePolicy, has the API server refuse one naming no workload, and the operator one following no tier', async () => {
    const policy = (name: string, spec: Record<string, unknown>) => ({
      apiVersion: 'molt.dev/v1alpha1',
      kind: 'ImagePolicy',
      metadata: { name, namespace: ns },
      spec: { repository: 'registry.example.com/acme/web', follow: 'rebuilds', ...spec },
    });
    await assert.rejects(apply(policy('web', { workloads: [] })), /spec\.workloads: Invalid value/);
    await apply(
      policy('web', {
        workloads: [{ namespaces: ['shop'] }],
        canary: { namespaces: ['shop-canary'], soak: '5m' },
      }),
    );
    await apply(policy('latest', { follow: 'latest', workloads: [{ names: ['shop/web'] }] }));
    const accepted = (name: string) =>
      kubectl(
        ...['get', 'imagepolicy', name, '-n', ns, '-o'],
        "jsonpath={.status.conditions[?(@.type=='Accepted')].reason} {.status.conditions[?(@.type=='Accepted')].message}",
      );
    await eventually(
      async () => {
        assert.equal(await accepted('web'), 'Accepted in force');
        assert.match(
          await accepted('latest'),
          /^InvalidSpec spec\.follow: must be rebuilds, revisions or \{semver/,
        );
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    await kubectl('delete', 'imagepolicy', 'web', 'latest', '-n', ns);
  });

  it('follows an applied Pool: its release waits for the window, rolls out once the policy is edited, and a MachineHold holds its machine', async () => {
    await apply(pool({ channel: 'stable', policies: [{ concurrency: 1 }, closed] }));
    await apply({
      kind: 'MachineHold',
      metadata: { name: 'w-2-disk-check', namespace: ns },
      spec: { machine: 'w-2', reason: 'disk check' },
    });
    await eventually(async () => {
      assert.match(
        await condition('pools.molt.dev', 'workers'),
        /^True Accepted: follows channel stable/,
      );
      assert.match(await condition('machineholds.molt.dev', 'w-2-disk-check'), /^True Held/);
      assert.equal((await rolloutTo('1.1.0')).phase, 'Active', tail());
    }, slow);
    // The window is closed: passes later, still nothing moved.
    assert.ok(scraped);
    await afterPasses(scraped, 3);
    const listed = RolloutSummaryView.array().parse(await scraped.json('/v1/rollouts'));
    const waiting = listed.find((r) => r.pool === 'workers' && r.target.version === '1.1.0');
    assert.ok(waiting, JSON.stringify(listed));
    const { InFlight, Succeeded, Failed, RolledBack } = waiting.counts;
    assert.deepEqual(
      { InFlight, Succeeded, Failed, RolledBack },
      { InFlight: 0, Succeeded: 0, Failed: 0, RolledBack: 0 },
      'no machine started',
    );
    assert.deepEqual(await versions(), { 'w-1': '1.0.0', 'w-2': '1.0.0' });
    assert.equal(
      await jsonpath('pools.molt.dev', '{.metadata.finalizers[0]}', 'workers'),
      'molt.dev/pool',
    );

    // The policy edited (window gone): the operator follows on its next pass; w-2 stays held.
    await apply(pool({ channel: 'stable', policies: [{ concurrency: 1 }] }));
    await eventually(async () => {
      assert.equal((await versions())['w-1'], '1.1.0', tail());
    }, slow);
    assert.equal((await versions())['w-2'], '1.0.0', 'held by its MachineHold');

    // What only the operator judges (a minute 61) is its condition; the last good spec stays.
    await apply(
      pool({
        channel: 'stable',
        policies: [{ window: { windows: [{ cron: '61 * * * *', duration: '1h' }] } }],
      }),
    );
    await eventually(async () => {
      const c = await condition('pools.molt.dev', 'workers');
      assert.match(c, /^False InvalidSpec: spec\.policies\[0\]/);
      assert.match(c, /the last accepted spec stays in force/);
    }, slow);

    await kubectl('delete', 'machinehold', 'w-2-disk-check', '-n', ns);
    await eventually(async () => {
      assert.equal((await rolloutTo('1.1.0')).phase, 'Completed', tail());
      assert.deepEqual(await versions(), { 'w-1': '1.1.0', 'w-2': '1.1.0' });
    }, slow);
  });

  it('approves, pauses and resumes a rollout through its Rollout object, recording who asked; a pin keeps its machine', async () => {
    await apply(pool({ channel: 'stable', requireApproval: true, policies: [{ concurrency: 1 }] }));
    await apply({
      kind: 'MachineHold',
      metadata: { name: 'w-2-vendor-kernel', namespace: ns },
      spec: { machine: 'w-2', reason: 'vendor kernel module', version: '1.1.0' },
    });
    await eventually(async () => {
      assert.match(await condition('pools.molt.dev', 'workers'), /^True Accepted/);
      assert.match(
        await condition('machineholds.molt.dev', 'w-2-vendor-kernel'),
        /^True Pinned: w-2 stays on 1\.1\.0/,
      );
    }, slow);
    await fleet.publish('1.2.0', { ...official, 'dev.molt.channels': 'stable' });
    let name = '';
    await eventually(async () => {
      const r = await rolloutTo('1.2.0');
      assert.equal(r.phase, 'AwaitingApproval', tail());
      name = r.name;
    }, slow);
    const patch = (spec: object) =>
      kubectl(
        'patch',
        'rollouts.molt.dev',
        name,
        '-n',
        ns,
        '--type=merge',
        '-p',
        JSON.stringify({ spec }),
      );
    await patch({ approved: true, paused: true });
    await eventually(async () => {
      assert.equal((await rolloutTo('1.2.0')).phase, 'Paused', tail());
    }, slow);
    const events = await kubectl(
      ...['get', 'events', '-n', ns, '--field-selector', `involvedObject.name=${name}`],
      ...['-o', 'jsonpath={range .items[*]}{.reason}: {.message}{"\\n"}{end}'],
    );
    assert.match(events, /RolloutActive: .*approved by kubernetes:kubectl-patch/);
    assert.match(events, /RolloutPaused: .*paused by kubernetes:kubectl-patch: spec\.paused/);
    await patch({ paused: false });
    await eventually(async () => {
      assert.equal((await rolloutTo('1.2.0')).phase, 'Completed', tail());
      assert.deepEqual(await versions(), { 'w-1': '1.2.0', 'w-2': '1.1.0' }, 'w-2 pinned');
    }, slow);
    // The pin deleted, the pool's drift repair brings w-2 to the release the pool completed.
    await apply(pool({ channel: 'stable', policies: [{ concurrency: 1 }] }));
    await kubectl('delete', 'machinehold', 'w-2-vendor-kernel', '-n', ns);
    await eventually(async () => {
      assert.deepEqual(await versions(), { 'w-1': '1.2.0', 'w-2': '1.2.0' }, tail());
      for (const line of await rollouts()) assert.match(line, / (Completed|Superseded)$/);
    }, slow);
  });

  it('cancels the rollout of a Pool deleted mid-rollout, and leaves no node cordoned', async () => {
    await apply(pool({ channel: 'stable', policies: [{ concurrency: 1 }] }));
    await fleet.publish('1.3.0', { ...official, 'dev.molt.channels': 'stable' });
    const core = admin.makeApiClient(CoreV1Api);
    const cordoned = (n: V1Node): boolean => n.spec?.unschedulable === true;
    await eventually(
      async () => {
        const list = await core.listNode();
        assert.ok(list.items.some(cordoned), `a node cordoned for 1.3.0: ${tail()}`);
        assert.equal((await rolloutTo('1.3.0')).phase, 'Active');
      },
      { timeoutMs: 240_000, intervalMs: 100 },
    );
    await kubectl('delete', 'pool', 'workers', '-n', ns, '--wait=false');
    // Kept by the operator's finalizer while its machine is in flight.
    assert.notEqual(
      await jsonpath('pools.molt.dev', '{.metadata.deletionTimestamp}', 'workers'),
      '',
    );
    await eventually(async () => {
      assert.equal((await rolloutTo('1.3.0')).phase, 'Cancelled', tail());
      assert.equal(await kubectl('get', 'pools.molt.dev', '-n', ns, '-o', 'name'), '');
      const list = await core.listNode();
      for (const n of list.items) {
        assert.equal(cordoned(n), false, `${n.metadata?.name ?? ''} uncordoned`);
        assert.equal(n.metadata?.annotations?.['molt.dev/cordoned-by'], undefined);
      }
    }, slow);
    // One machine finished its upgrade; the other never started.
    const v = Object.values(await versions()).sort();
    assert.deepEqual(v, ['1.2.0', '1.3.0']);
  });
});
