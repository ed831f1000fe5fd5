// SPDX-License-Identifier: Apache-2.0
// deploy/kubernetes runs the image `molt image build --operator` makes: the Deployment's user,
// config path and ports agree with the image and with the example config, and that config and its
// fleet file are ones the operator accepts. (test/integration/kube/operator-deploy.test.ts has a
// real API server check the rendered objects.)
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { keepsEmptyDirData } from '../../core/drain/pods.ts';
import { parseFleet } from '../../protocol/fleet.ts';
import { OperatorConfig } from '../../protocol/operator-config.ts';
import { packageFile } from '../../platform/package-files.ts';
import { DefaultConfigPath } from './image.ts';
import { NonRoot } from './rootfs.ts';

interface Obj {
  kind: string;
  metadata: { name: string; namespace?: string };
  [key: string]: unknown;
}
interface Container {
  image: string;
  args: string[];
  ports: { name: string; containerPort: number }[];
  readinessProbe: { httpGet: { path: string; port: string; scheme?: string } };
  livenessProbe: { httpGet: { path: string; port: string; scheme?: string } };
  startupProbe: {
    httpGet: { path: string; port: string; scheme?: string };
    periodSeconds: number;
    failureThreshold: number;
  };
  resources: { requests: Record<string, string>; limits: Record<string, string> };
  securityContext: {
    allowPrivilegeEscalation: boolean;
    readOnlyRootFilesystem: boolean;
    capabilities: { drop: string[] };
  };
  volumeMounts: { name: string; mountPath: string }[];
}
interface Deployment extends Obj {
  spec: {
    replicas: number;
    template: {
      metadata: { annotations?: Record<string, string> };
      spec: {
        serviceAccountName: string;
        securityContext: {
          runAsNonRoot: boolean;
          runAsUser: number;
          runAsGroup: number;
          seccompProfile: { type: string };
        };
        containers: Container[];
        volumes: { name: string; configMap?: { name: string }; secret?: { secretName: string } }[];
      };
    };
  };
}

const dir = packageFile('deploy', 'kubernetes');
const objects = async (): Promise<Obj[]> =>
  parseAllDocuments(await readFile(`${dir}/operator.yaml`, 'utf8')).map((d) => d.toJS() as Obj);
function find(all: Obj[], kind: string): Obj {
  const o = all.find((x) => x.kind === kind);
  assert.ok(o, `operator.yaml has a ${kind}`);
  return o;
}

describe('deploy/kubernetes: the operator Deployment', () => {
  it('runs two replicas of the image as its nonroot user, locked down, with the config path the image expects', async () => {
    const all = await objects();
    for (const o of all)
      assert.equal(o.metadata.namespace, 'molt-system', `${o.kind} ${o.metadata.name}`);
    const d = find(all, 'Deployment') as Deployment;
    assert.equal(d.spec.replicas, 2);
    const pod = d.spec.template.spec;
    assert.equal(pod.serviceAccountName, find(all, 'ServiceAccount').metadata.name);
    assert.deepEqual(pod.securityContext.runAsNonRoot, true);
    assert.equal(pod.securityContext.runAsUser, NonRoot.uid);
    assert.equal(pod.securityContext.runAsGroup, NonRoot.gid);
    assert.equal(pod.securityContext.seccompProfile.type, 'RuntimeDefault');
    const [c] = pod.containers;
    assert.ok(c);
    assert.deepEqual(c.args, ['--config', DefaultConfigPath]);
    assert.deepEqual(c.securityContext, {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    assert.ok(c.resources.requests['memory'] && c.resources.limits['memory']);
    assert.ok(c.resources.requests['cpu'] && c.resources.limits['cpu']);
    // A read-only root: /tmp is the one writable place — scratch, which a drain may discard, or
    // molt's own drain (deleteEmptyDirData: false) would never evict the operator from its node.
    assert.ok(c.volumeMounts.some((m) => m.mountPath === '/tmp'));
    const volumes = (pod as unknown as { volumes: { name: string; emptyDir?: object }[] }).volumes;
    assert.ok(volumes.some((v) => v.emptyDir !== undefined));
    assert.equal(keepsEmptyDirData(volumes, d.spec.template.metadata.annotations), false);
    const kustomization = parseYaml(await readFile(`${dir}/kustomization.yaml`, 'utf8')) as {
      resources: string[];
      images: { name: string }[];
    };
    assert.deepEqual(
      kustomization.images.map((i) => i.name),
      [c.image],
    );
    for (const r of kustomization.resources) await readFile(`${dir}/${r}`, 'utf8');
  });

  it('has a PodDisruptionBudget and a Service over the ports the config listens on', async () => {
    const all = await objects();
    const pdb = find(all, 'PodDisruptionBudget') as Obj & { spec: { maxUnavailable: number } };
    assert.equal(pdb.spec.maxUnavailable, 1);
    const d = find(all, 'Deployment') as Deployment;
    const c = d.spec.template.spec.containers[0]!;
    const cm = find(all, 'ConfigMap') as Obj & { data: Record<string, string> };
    const config = OperatorConfig.parse(parseYaml(cm.data['operator.yaml'] ?? ''));
    const ports = new Map(c.ports.map((p) => [p.name, p.containerPort]));
    assert.equal(ports.get('api'), config.listen?.port);
    assert.equal(ports.get('dashboard'), config.dashboard?.listen.port);
    const service = find(all, 'Service') as Obj & { spec: { ports: { targetPort: string }[] } };
    assert.deepEqual(service.spec.ports.map((p) => p.targetPort).sort(), ['api', 'dashboard']);
    // The probes ask the probe listener (plain HTTP): ready while the store answers, alive while
    // the process does — never the dashboard, whose answers say nothing of the store.
    assert.equal(ports.get('probes'), config.health?.listen.port);
    assert.equal(c.readinessProbe.httpGet.path, '/readyz');
    assert.equal(c.livenessProbe.httpGet.path, '/healthz');
    // A slow machine (a VM under emulation took over 70 s to load molt) is not killed while it
    // starts: liveness counts only after the first answer, given minutes.
    assert.equal(c.startupProbe.httpGet.path, '/healthz');
    assert.ok(c.startupProbe.periodSeconds * c.startupProbe.failureThreshold >= 300);
    for (const probe of [c.readinessProbe, c.livenessProbe, c.startupProbe]) {
      assert.equal(probe.httpGet.port, 'probes');
      assert.equal(probe.httpGet.scheme ?? 'HTTP', 'HTTP');
    }
    const volumes = d.spec.template.spec.volumes;
    assert.ok(volumes.some((v) => v.configMap?.name === cm.metadata.name));
    assert.ok(volumes.some((v) => v.secret?.secretName === 'molt-operator-pki'));
  });

  it('ships an example config the operator accepts: store kubernetes, PKI from the mounted Secret', async () => {
    const cm = find(await objects(), 'ConfigMap') as Obj & { data: Record<string, string> };
    const config = OperatorConfig.parse(parseYaml(cm.data['operator.yaml'] ?? ''));
    assert.deepEqual(config.store, { kubernetes: {} });
    // In the cluster: the pod's ServiceAccount (no kubeconfig), one leader by Lease.
    assert.ok(config.kubernetes);
    assert.equal(config.kubernetes.kubeconfig, undefined);
    assert.equal(config.kubernetes.leaderElection, true);
    assert.equal(config.kubernetes.namespace, 'molt-system');
    for (const path of Object.values(config.pki)) assert.match(path ?? '', /^\/etc\/molt\/pki\//);
    assert.equal(config.fleet, '/etc/molt/config/fleet.yaml');
    const fleet = parseFleet(cm.data['fleet.yaml'] ?? '');
    assert.deepEqual(
      fleet.pools.map((p) => p.name),
      ['workers'],
    );
  });
});
