// SPDX-License-Identifier: Apache-2.0
// deploy/kubernetes as a platform team installs it, against a real API server: `kubectl kustomize`
// renders it (the image set by `images:`, the Namespace kept), the API server accepts every object
// in a server-side dry run (schemas, admission), a real `kubectl apply -k` creates them, the
// Deployment's controller makes two pods from the template, and the ServiceAccount the pods run
// as may hold its Lease, keep its records and write its status in its namespace, and no more
// than its Role says there.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { writeOperatorOverlay } from '../../../src/lab/cluster-operator.ts';
import { startPodRelay } from '../../../src/lab/services/pod-relay.ts';
import { freePort } from '../../../src/platform/process/free-port.ts';
import { parseFleet } from '../../../src/protocol/fleet.ts';
import { OperatorConfig } from '../../../src/protocol/operator-config.ts';
import {
  startKubeControlPlane,
  type KubeControlPlane,
} from '../../../src/lab/services/kube-control-plane.ts';
import { eventually } from '../../../src/platform/process/managed-process.ts';
import { scratchDir } from '../../../src/testkit/scratch-dir.ts';

const exec = promisify(execFile);
const deploy = join(import.meta.dirname, '../../../deploy/kubernetes');
const ns = 'molt-system';
const sa = `system:serviceaccount:${ns}:molt-operator`;
let cp: KubeControlPlane;

/** kubectl as the cluster's admin; rejects with its stderr. */
async function kubectl(...args: string[]): Promise<string> {
  try {
    return (
      await exec(join(cp.bins, 'kubectl'), ['--kubeconfig', cp.admin.kubeconfig, ...args], {
        maxBuffer: 32 << 20,
      })
    ).stdout;
  } catch (e) {
    throw new Error((e as { stderr?: string }).stderr ?? String(e), { cause: e });
  }
}

/** `kubectl auth can-i` as the operator's ServiceAccount: true for "yes", false for "no". */
async function can(...args: string[]): Promise<boolean> {
  const argv = ['--kubeconfig', cp.admin.kubeconfig, 'auth', 'can-i', '--as', sa, ...args];
  try {
    return (await exec(join(cp.bins, 'kubectl'), argv)).stdout.trim() === 'yes';
  } catch (e) {
    // can-i prints "no" and exits 1
    const { stdout, stderr } = e as { stdout?: string; stderr?: string };
    if (stdout?.trim() === 'no') return false;
    throw new Error(stderr ?? String(e), { cause: e });
  }
}

interface Obj {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: { template?: { spec: { containers: { image: string }[] } } };
}

before(async () => {
  cp = await startKubeControlPlane();
});
after(async () => {
  await cp.stop();
});

describe('deploy/kubernetes on a real API server', () => {
  it('renders with kubectl kustomize: the operator image set, the Namespace kept', async () => {
    const objects = parseAllDocuments(await kubectl('kustomize', deploy)).map(
      (d) => d.toJS() as Obj,
    );
    const kinds = new Set(objects.map((o) => o.kind));
    for (const kind of [
      'Namespace',
      'CustomResourceDefinition',
      'ServiceAccount',
      'Role',
      'RoleBinding',
      'ConfigMap',
      'Deployment',
      'PodDisruptionBudget',
      'Service',
    ])
      assert.ok(kinds.has(kind), kind);
    assert.deepEqual(
      objects.filter((o) => o.kind === 'Namespace').map((o) => o.metadata.name),
      [ns],
    );
    const deployment = objects.find((o) => o.kind === 'Deployment');
    assert.equal(
      deployment?.spec?.template?.spec.containers[0]?.image,
      'registry.example.com/molt/operator:0.1.0',
    );
  });

  it('takes the lab’s overlay (`molt lab up --operator cluster`): image by digest, config and PKI generated, the API server’s own address for clusters without kube-proxy', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'molt-overlay-'));
    try {
      const pem = (name: string) => join(dir, `${name}.pem`);
      for (const f of ['ca', 'op', 'opk', 'srv', 'srvk']) await writeFile(pem(f), `${f}\n`);
      const digest = `sha256:${'a'.repeat(64)}`;
      const overlay = join(dir, 'operator');
      await writeOperatorOverlay(
        {
          dir: overlay,
          registry: '10.231.9.1:5000',
          apiServer: 'https://10.231.9.1:6443',
          pki: {
            ca: pem('ca'),
            cert: pem('op'),
            key: pem('opk'),
            serverCert: pem('srv'),
            serverKey: pem('srvk'),
          },
          machines: [
            {
              id: 'vm-1',
              endpoint: 'https://10.231.9.14:7443',
              role: 'worker',
              pool: 'vms',
              labels: {},
            },
          ],
          config: { discoverEvery: '2s' },
          nodeSelector: { 'molt.dev/pool': 'vms' },
          cpuRequest: '400m',
          startupSeconds: 900,
        },
        `10.231.9.1:5000/molt/operator@${digest}`,
      );
      const objects = parseAllDocuments(await kubectl('kustomize', overlay)).map(
        (d) => d.toJS() as Obj & { data?: Record<string, string> },
      );
      const deployment = objects.find((o) => o.kind === 'Deployment');
      const container = deployment?.spec?.template?.spec.containers[0] as
        | {
            image: string;
            env: { name: string; value: string }[];
            resources: { requests: Record<string, string> };
            startupProbe: { periodSeconds: number; failureThreshold: number };
          }
        | undefined;
      assert.equal(container?.image, `10.231.9.1:5000/molt/operator@${digest}`);
      assert.equal(container.resources.requests['cpu'], '400m');
      const { periodSeconds, failureThreshold } = container.startupProbe;
      assert.equal(periodSeconds * failureThreshold, 900, 'a 15-minute start');
      assert.deepEqual(
        container.env.filter((e) => e.name.startsWith('KUBERNETES_SERVICE_')),
        [
          { name: 'KUBERNETES_SERVICE_HOST', value: '10.231.9.1' },
          { name: 'KUBERNETES_SERVICE_PORT', value: '6443' },
        ],
      );
      assert.deepEqual(
        (deployment?.spec?.template?.spec as { nodeSelector?: unknown }).nodeSelector,
        { 'molt.dev/pool': 'vms' },
      );
      const config = objects.find(
        (o) => o.kind === 'ConfigMap' && o.metadata.name === 'molt-operator-config',
      );
      assert.equal(config?.metadata.namespace, ns);
      const parsed = OperatorConfig.parse(parseYaml(config.data?.['operator.yaml'] ?? ''));
      assert.deepEqual(parsed.store, { kubernetes: {} });
      assert.equal(parsed.fleet, '/etc/molt/config/fleet.yaml');
      assert.equal(parsed.kubernetes?.namespace, ns);
      assert.equal(parsed.kubernetes.kubeconfig, undefined, 'the pod’s ServiceAccount');
      const fleet = parseFleet(config.data?.['fleet.yaml'] ?? '', {
        poolsDeclaredElsewhere: true,
      });
      assert.deepEqual(
        fleet.machines.map((m) => m.endpoint),
        ['https://10.231.9.14:7443'],
      );
      const secret = objects.find((o) => o.kind === 'Secret');
      assert.equal(secret?.metadata.name, 'molt-operator-pki');
      assert.equal(secret.metadata.namespace, ns);
      assert.deepEqual(Object.keys(secret.data ?? {}).sort(), [
        'ca.pem',
        'operator.key',
        'operator.pem',
        'server.key',
        'server.pem',
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('is accepted whole by the API server in a dry run, then applied for real', async () => {
    // A dry run creates nothing, so the namespaced objects need their namespace first.
    await kubectl('create', 'namespace', ns);
    const dry = await kubectl('apply', '--dry-run=server', '-k', deploy);
    assert.match(dry, /deployment\.apps\/molt-operator created \(server dry run\)/);
    assert.match(dry, /poddisruptionbudget\.policy\/molt-operator created \(server dry run\)/);
    await assert.rejects(kubectl('-n', ns, 'get', 'deployment', 'molt-operator'), /NotFound/);
    await kubectl('apply', '-k', deploy);
    const d = JSON.parse(
      await kubectl('-n', ns, 'get', 'deployment', 'molt-operator', '-o', 'json'),
    ) as {
      spec: { replicas: number };
    };
    assert.equal(d.spec.replicas, 2);
  });

  it('makes two pods of the template, as molt-operator, locked down', async () => {
    const pods = await eventually(
      async () => {
        const list = JSON.parse(
          await kubectl(
            '-n',
            ns,
            'get',
            'pods',
            '-l',
            'app.kubernetes.io/name=molt-operator',
            '-o',
            'json',
          ),
        ) as {
          items: {
            spec: {
              serviceAccountName: string;
              securityContext: { runAsNonRoot: boolean; runAsUser: number };
              containers: { securityContext: { readOnlyRootFilesystem: boolean } }[];
            };
          }[];
        };
        if (list.items.length !== 2) throw new Error(`${String(list.items.length)} pods so far`);
        return list.items;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    for (const p of pods) {
      assert.equal(p.spec.serviceAccountName, 'molt-operator');
      assert.equal(p.spec.securityContext.runAsNonRoot, true);
      assert.equal(p.spec.securityContext.runAsUser, 65532);
      assert.equal(p.spec.containers[0]?.securityContext.readOnlyRootFilesystem, true);
    }
  });

  it('is reached through the lab’s relay: the Lease holder’s pod, else a Ready replica, else nothing', async () => {
    // The two pods run nowhere (no kubelet): their status says where they listen, two loopback
    // addresses each with a server on the API's port that names the pod.
    const names = (await kubectl('-n', ns, 'get', 'pods', '-o', 'name'))
      .split('\n')
      .filter((l) => l.startsWith('pod/'))
      .map((l) => l.slice(4))
      .sort();
    assert.equal(names.length, 2);
    const port = await freePort();
    const servers = names.map((name, i) => {
      const server = createServer((c) => c.end(name));
      server.listen(port, `127.0.0.${String(i + 2)}`);
      return server;
    });
    const status = async (name: string, i: number, ready: boolean) =>
      kubectl(
        ...['-n', ns, 'patch', 'pod', name, '--subresource=status', '--type=merge', '-p'],
        JSON.stringify({
          status: {
            podIP: `127.0.0.${String(i + 2)}`,
            podIPs: [{ ip: `127.0.0.${String(i + 2)}` }],
            conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
          },
        }),
      );
    const relay = await startPodRelay(
      { namespace: ns, name: 'molt-operator', kubeconfig: cp.admin.kubeconfig },
      [port],
    );
    const ask = async (): Promise<string> => {
      const [host, p] = (relay.addresses.get(port) ?? '').split(':');
      const socket = connect({ host, port: Number(p) });
      let text = '';
      socket.on('data', (d: Buffer) => (text += d.toString()));
      await once(socket, 'close');
      return text;
    };
    const [first = '', second = ''] = names;
    try {
      await status(first, 0, true);
      await status(second, 1, true);
      // The operator's id in a pod is `<pod name>-<pid>`.
      const file = join(await scratchDir('lease'), 'lease.json');
      await writeFile(
        file,
        JSON.stringify({
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: 'molt-operator', namespace: ns },
          spec: { holderIdentity: `${second}-7` },
        }),
      );
      await kubectl('apply', '-f', file);
      assert.equal(await ask(), second, 'the Lease holder’s pod');
      await status(second, 1, false);
      assert.equal(await ask(), first, 'the leader unready: a Ready replica');
      await status(first, 0, false);
      assert.equal(await ask(), '', 'no Ready replica: the connection is closed');
    } finally {
      await relay.close();
      for (const s of servers) s.close();
      await kubectl('-n', ns, 'delete', 'lease', 'molt-operator', '--ignore-not-found');
    }
  });

  it('lets the ServiceAccount hold its Lease and write its status, in its namespace only', async () => {
    assert.equal(await can('-n', ns, 'create', 'leases.coordination.k8s.io'), true);
    assert.equal(await can('-n', ns, 'update', 'leases.coordination.k8s.io'), true);
    assert.equal(await can('-n', ns, 'create', 'rollouts.molt.dev'), true);
    // store: kubernetes: its records, written by compare-and-swap
    assert.equal(await can('-n', ns, 'update', 'operatorrecords.molt.dev'), true);
    assert.equal(await can('-n', 'default', 'update', 'operatorrecords.molt.dev'), false);
    assert.equal(await can('-n', ns, 'create', 'events'), true);
    assert.equal(await can('-n', 'default', 'create', 'leases.coordination.k8s.io'), false);
    assert.equal(await can('-n', ns, 'create', 'secrets'), false);
    assert.equal(await can('-n', ns, 'delete', 'pods'), false);
  });
});
