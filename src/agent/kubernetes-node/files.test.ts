// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { isMoltError } from '../../core/errors.ts';
import { MachineConfig, type MachineConfigInput } from '../../protocol/machine-config.ts';
import { NodeDir, renderNodeFiles } from './files.ts';

const run = promisify(execFile);
const caPem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const token = 'abcdef.0123456789abcdef';

const node = {
  server: 'https://10.0.2.2:6443',
  caFile: '/host/ca.crt',
  bootstrapTokenFile: '/host/token',
  podCidr: '10.244.1.0/24',
  sandboxImage: '127.0.0.1:5000/molt/pause:3.10',
};

function config(over: Partial<MachineConfigInput> = {}, n: object = node): MachineConfig {
  return MachineConfig.parse({
    node: 'n1',
    role: 'worker',
    bootloader: 'grub',
    registry: { insecure: true, mirrors: { '127.0.0.1:5000': '10.0.2.2:5000' } },
    kubernetes: { kubeconfig: '/molt/state/agent.kubeconfig', node: n },
    ...over,
  });
}

const text = (files: ReturnType<typeof renderNodeFiles>, name: string): string => {
  const f = files[name];
  assert.ok(f !== undefined, `${name} rendered`);
  return f.content;
};

/** containerd.toml as data, through Python's tomllib (a real TOML parser), when there is one. */
async function tomlData(t: string): Promise<Record<string, unknown> | undefined> {
  const script = 'import json,sys,tomllib; print(json.dumps(tomllib.loads(sys.stdin.read())))';
  try {
    const child = run('python3', ['-c', script]);
    child.child.stdin?.end(t);
    return JSON.parse((await child).stdout) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

describe('renderNodeFiles', () => {
  const files = renderNodeFiles(config(), { caPem, token: `${token}\n` });

  it('renders exactly the node files, the token file private', () => {
    assert.deepEqual(Object.keys(files).sort(), [
      'bootstrap.kubeconfig',
      'ca.crt',
      'certs.d/127.0.0.1:5000/hosts.toml',
      'cni/10-molt-bridge.conflist',
      'containerd.toml',
      'kubelet.env',
      'kubelet.yaml',
    ]);
    for (const [name, f] of Object.entries(files))
      assert.equal(f.mode, name === 'bootstrap.kubeconfig' ? 0o600 : 0o644, name);
    assert.equal(text(files, 'ca.crt'), caPem);
    assert.equal(text(files, 'kubelet.env'), 'KUBELET_ARGS=--hostname-override=n1\n');
  });

  it('bootstrap.kubeconfig: the server, the CA on STATE and the token (trimmed)', () => {
    const kc = parse(text(files, 'bootstrap.kubeconfig')) as {
      clusters: [{ cluster: Record<string, string> }];
      users: [{ user: { token: string } }];
      'current-context': string;
    };
    assert.equal(kc.clusters[0].cluster['server'], 'https://10.0.2.2:6443');
    assert.equal(kc.clusters[0].cluster['certificate-authority'], `${NodeDir}/ca.crt`);
    assert.equal(kc.users[0].user.token, token);
    assert.equal(kc['current-context'], 'bootstrap');
  });

  it('kubelet.yaml: systemd cgroups, containerd, webhook auth with the cluster CA, rotation', () => {
    const k = parse(text(files, 'kubelet.yaml')) as Record<string, unknown>;
    assert.equal(k['kind'], 'KubeletConfiguration');
    assert.equal(k['apiVersion'], 'kubelet.config.k8s.io/v1beta1');
    assert.equal(k['cgroupDriver'], 'systemd');
    assert.equal(k['containerRuntimeEndpoint'], 'unix:///run/containerd/containerd.sock');
    assert.deepEqual(k['authentication'], {
      anonymous: { enabled: false },
      webhook: { enabled: true },
      x509: { clientCAFile: `${NodeDir}/ca.crt` },
    });
    assert.deepEqual(k['authorization'], { mode: 'Webhook' });
    assert.equal(k['rotateCertificates'], true);
    assert.equal(k['failSwapOn'], false);
    assert.equal(k['staticPodPath'], `${NodeDir}/manifests`);
    assert.equal(k['maxPods'], 110);
    assert.equal(
      k['resolvConf'],
      '/run/systemd/resolve/resolv.conf',
      'not resolved’s loopback stub',
    );
    assert.equal(k['nodeStatusUpdateFrequency'], '4s');
    assert.equal(k['nodeLeaseDurationSeconds'], 40);
    assert.equal((k['evictionHard'] as Record<string, string>)['memory.available'], '100Mi');
    const more = renderNodeFiles(config({}, { ...node, maxPods: 30 }), { caPem, token });
    assert.equal((parse(text(more, 'kubelet.yaml')) as { maxPods: number }).maxPods, 30);
  });

  it('the bridge: cni0, gateway, masquerade out of the pod subnet, host-local in it, portmap', () => {
    const c = JSON.parse(text(files, 'cni/10-molt-bridge.conflist')) as {
      plugins: [Record<string, unknown>, Record<string, unknown>];
    };
    const [bridge, portmap] = c.plugins;
    assert.equal(bridge['type'], 'bridge');
    assert.equal(bridge['bridge'], 'cni0');
    assert.equal(bridge['isGateway'], true);
    assert.equal(bridge['ipMasq'], true);
    assert.deepEqual((bridge['ipam'] as { ranges: unknown }).ranges, [
      [{ subnet: '10.244.1.0/24' }],
    ]);
    assert.equal(portmap['type'], 'portmap');
  });

  it('containerd.toml: config version 3, EPHEMERAL root, CRI with runc on systemd cgroups', async (t) => {
    const toml = text(files, 'containerd.toml');
    assert.match(toml, /^version = 3\n/);
    assert.match(toml, /^SystemdCgroup = true$/m);
    const data = await tomlData(toml);
    if (data === undefined) {
      t.skip('no python3 tomllib to read TOML back');
      return;
    }
    const plugins = data['plugins'] as Record<string, Record<string, unknown>>;
    assert.equal(data['root'], '/molt/ephemeral/containerd');
    assert.equal(data['state'], '/run/containerd');
    assert.deepEqual(plugins['io.containerd.cri.v1.images'], {
      snapshotter: 'overlayfs',
      pinned_images: { sandbox: '127.0.0.1:5000/molt/pause:3.10' },
      registry: { config_path: `${NodeDir}/certs.d` },
    });
    const runtime = plugins['io.containerd.cri.v1.runtime'] as {
      containerd: { runtimes: { runc: { runtime_type: string; options: object } } };
      cni: object;
    };
    assert.deepEqual(runtime.containerd.runtimes.runc, {
      runtime_type: 'io.containerd.runc.v2',
      options: { SystemdCgroup: true },
    });
    assert.deepEqual(runtime.cni, { bin_dirs: ['/opt/cni/bin'], conf_dir: `${NodeDir}/cni` });
    const hosts = await tomlData(text(files, 'certs.d/127.0.0.1:5000/hosts.toml'));
    assert.deepEqual(hosts, {
      server: 'http://10.0.2.2:5000',
      capabilities: ['pull', 'resolve'],
      skip_verify: true,
    });
  });

  it('a plain-HTTP registry reached directly: its own hosts.toml, the sandbox image’s and registry.host', async () => {
    const direct = renderNodeFiles(
      config(
        { registry: { insecure: true, host: 'reg.lab:5000' } },
        {
          ...node,
          sandboxImage: '10.231.0.1:5000/molt/pause:3.10',
        },
      ),
      { caPem, token },
    );
    for (const registry of ['10.231.0.1:5000', 'reg.lab:5000'])
      assert.deepEqual(await tomlData(text(direct, `certs.d/${registry}/hosts.toml`)), {
        server: `http://${registry}`,
        capabilities: ['pull', 'resolve'],
        skip_verify: true,
      });
    const tls = renderNodeFiles(config({ registry: { insecure: false } }), { caPem, token });
    assert.deepEqual(
      Object.keys(tls).filter((f) => f.startsWith('certs.d/')),
      [],
      'a TLS registry needs no file',
    );
  });

  it('a TLS registry mirror: https, certificates verified', () => {
    const tls = renderNodeFiles(
      config({ registry: { mirrors: { 'reg.example': 'mirror.example:443' } } }),
      { caPem, token },
    );
    assert.equal(
      text(tls, 'certs.d/reg.example/hosts.toml'),
      'server = "https://mirror.example:443"\ncapabilities = ["pull", "resolve"]\n',
    );
  });

  it('the Node name: kubernetes.nodeName when set', () => {
    const named = MachineConfig.parse({
      ...config(),
      kubernetes: { ...config().kubernetes, nodeName: 'other' },
    });
    assert.equal(
      text(renderNodeFiles(named, { caPem, token }), 'kubelet.env'),
      'KUBELET_ARGS=--hostname-override=other\n',
    );
  });

  it("the Node address: kubernetes.node.address as the kubelet's --node-ip", () => {
    assert.equal(
      text(
        renderNodeFiles(config({}, { ...node, address: '10.231.0.12' }), { caPem, token }),
        'kubelet.env',
      ),
      'KUBELET_ARGS=--hostname-override=n1 --node-ip=10.231.0.12\n',
    );
  });

  it('refuses a config without kubernetes.node, a malformed token or CA', () => {
    const refused = (f: () => unknown, message: RegExp): void => {
      assert.throws(f, (e) => isMoltError(e, 'MOLT_MACHINE_INVALID') && message.test(e.message));
    };
    const plain = MachineConfig.parse({ node: 'n1', role: 'worker', bootloader: 'grub' });
    refused(() => renderNodeFiles(plain, { caPem, token }), /has no kubernetes\.node/);
    refused(() => renderNodeFiles(config(), { caPem, token: 'ABCDEF.0123456789abcdef' }), /token/);
    refused(() => renderNodeFiles(config(), { caPem: 'x', token }), /not a PEM certificate/);
  });
});

describe('kubernetes.node in the machine config', () => {
  const issue = (n: object): string => {
    const r = MachineConfig.safeParse({
      node: 'n1',
      role: 'worker',
      bootloader: 'grub',
      kubernetes: { kubeconfig: '/k', node: n },
    });
    assert.equal(r.success, false, JSON.stringify(n));
    const i = r.error.issues[0];
    return `${i?.path.join('.') ?? ''}: ${i?.message ?? ''}`;
  };

  it('is optional beside the agent kubeconfig, which stays required', () => {
    assert.equal(config().kubernetes?.node?.podCidr, '10.244.1.0/24');
    const r = MachineConfig.safeParse({
      node: 'n1',
      role: 'worker',
      bootloader: 'grub',
      kubernetes: { node },
    });
    assert.equal(r.error?.issues[0]?.path.join('.'), 'kubernetes.kubeconfig');
  });

  it('says what is wrong with each field', () => {
    assert.match(
      issue({ ...node, server: 'http://x:6443' }),
      /^kubernetes\.node\.server: must be the https/,
    );
    assert.match(issue({ ...node, podCidr: '10.244.1.1/24' }), /podCidr: .*no host bits/);
    assert.match(issue({ ...node, podCidr: '10.244.1.0/31' }), /podCidr: .*from 8 to 30/);
    assert.match(issue({ ...node, podCidr: '300.0.0.0/8' }), /podCidr/);
    assert.match(issue({ ...node, sandboxImage: 'pause:3.10' }), /sandboxImage: .*registry host/);
    assert.match(issue({ ...node, caFile: '' }), /caFile: must name the cluster CA/);
    assert.match(issue({ ...node, maxPods: 0 }), /maxPods/);
    assert.match(issue({ ...node, address: '10.231.0.12/24' }), /address: must be an IPv4 address/);
    assert.match(issue({ ...node, address: '10.231.0.256' }), /address: must be an IPv4 address/);
    assert.match(issue({ ...node, extra: 1 }), /extra/);
    const noToken = Object.fromEntries(
      Object.entries(node).filter(([k]) => k !== 'bootstrapTokenFile'),
    );
    assert.match(issue(noToken), /^kubernetes\.node\.bootstrapTokenFile/);
  });
});
