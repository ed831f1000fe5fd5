// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../../core/errors.ts';
import {
  CniPlugins,
  installNodeBinaries,
  NodeBins,
  nodeRuntimeSummary,
  NodeRuntimeFiles,
  NodeRuntimeUnits,
  readNodeRuntime,
  RuntimeDirs,
} from './node-runtime.ts';

const versions = {
  kubernetes: 'v1.36.3',
  containerd: 'v2.4.2',
  cniPlugins: 'v1.10.0',
  crictl: 'v1.37.0',
};

/** A directory laid out like scripts/ensure-node-bins.sh's, each binary a small script. */
async function nodeDir(root: string, name: string): Promise<string> {
  const dir = join(root, name);
  await mkdir(join(dir, 'bin'), { recursive: true });
  await mkdir(join(dir, 'cni'), { recursive: true });
  for (const b of NodeBins) await writeFile(join(dir, 'bin', b), `#!/bin/sh\necho ${b}\n`);
  for (const p of CniPlugins) await writeFile(join(dir, 'cni', p), `#!/bin/sh\necho ${p}\n`);
  await writeFile(join(dir, 'versions.json'), JSON.stringify(versions));
  return dir;
}

const refused = (pattern: RegExp) => (e: unknown) =>
  isMoltError(e) &&
  e.code === ErrorCode.BadFlag &&
  pattern.test(e.message) &&
  /bash scripts\/ensure-node-bins\.sh/.test(e.hint ?? '');

describe('--kubernetes-node DIR', () => {
  let root = '';
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'molt-node-runtime-'));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('reads the versions, and its digest follows every binary and versions.json', async () => {
    const dir = await nodeDir(root, 'ok');
    const r = await readNodeRuntime(dir);
    assert.deepEqual(r.versions, versions);
    assert.deepEqual(nodeRuntimeSummary(r.versions), {
      kubelet: 'v1.36.3',
      containerd: 'v2.4.2',
      cniPlugins: 'v1.10.0',
      crictl: 'v1.37.0',
    });
    assert.equal((await readNodeRuntime(await nodeDir(root, 'same'))).digest, r.digest);
    for (const rel of ['bin/kubelet', 'bin/ctr', 'cni/portmap']) {
      const other = await nodeDir(root, `changed-${rel.replace('/', '-')}`);
      await writeFile(join(other, rel), '# rebuilt\n', { flag: 'a' });
      assert.notEqual((await readNodeRuntime(other)).digest, r.digest, rel);
    }
    const newer = await nodeDir(root, 'newer');
    await writeFile(
      join(newer, 'versions.json'),
      JSON.stringify({ ...versions, crictl: 'v1.38.0' }),
    );
    assert.notEqual((await readNodeRuntime(newer)).digest, r.digest);
  });

  it('names the file a directory lacks, and says which script makes the directory', async () => {
    for (const rel of [
      'bin/kubelet',
      'bin/containerd-shim-runc-v2',
      'cni/host-local',
      'versions.json',
    ]) {
      const dir = await nodeDir(root, `missing-${rel.replace('/', '-')}`);
      await rm(join(dir, rel));
      await assert.rejects(readNodeRuntime(dir), refused(new RegExp(`has no ${rel}$`)));
    }
    await assert.rejects(readNodeRuntime(join(root, 'nowhere')), refused(/is not a directory/));
  });

  it('refuses a versions.json that is not JSON or lacks a version', async () => {
    const dir = await nodeDir(root, 'bad-versions');
    await writeFile(join(dir, 'versions.json'), 'kubernetes=v1.36.3');
    await assert.rejects(readNodeRuntime(dir), refused(/not JSON/));
    await writeFile(join(dir, 'versions.json'), JSON.stringify({ ...versions, crictl: undefined }));
    await assert.rejects(readNodeRuntime(dir), refused(/"crictl"/));
    await writeFile(
      join(dir, 'versions.json'),
      JSON.stringify({ ...versions, kubernetes: '1.36' }),
    );
    await assert.rejects(readNodeRuntime(dir), refused(/"kubernetes"/));
  });

  it('installs the binaries executable in /usr/local/bin and /opt/cni/bin', async () => {
    const tree = join(root, 'tree');
    await mkdir(tree);
    await installNodeBinaries(tree, await readNodeRuntime(await nodeDir(root, 'install')));
    for (const path of [
      ...NodeBins.map((b) => `usr/local/bin/${b}`),
      ...CniPlugins.map((p) => `opt/cni/bin/${p}`),
    ]) {
      const st = await stat(join(tree, path));
      assert.equal(st.mode & 0o777, 0o755, path);
    }
    assert.match(await readFile(join(tree, 'usr/local/bin/crictl'), 'utf8'), /echo crictl/);
    for (const dir of RuntimeDirs) assert.ok((await stat(join(tree, dir))).isDirectory(), dir);
  });
});

/** A unit file's `Key=value` lines by section (continuation lines joined). */
function parseUnit(text: string): Map<string, Map<string, string[]>> {
  const sections = new Map<string, Map<string, string[]>>();
  let current = new Map<string, string[]>();
  const joined = text.replace(/\\\n\s*/g, ' ');
  for (const line of joined.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const header = /^\[(\w+)\]$/.exec(line);
    if (header !== null) {
      current = new Map();
      sections.set(header[1] ?? '', current);
      continue;
    }
    const eq = line.indexOf('=');
    assert.ok(eq > 0, `not a Key=value line: ${line}`);
    const key = line.slice(0, eq);
    current.set(key, [...(current.get(key) ?? []), line.slice(eq + 1)]);
  }
  return sections;
}

const NodeState = '/molt/state/kubernetes/node';
/** The files molt install renders on STATE (the contract's list) and what the image ships. */
const known = [
  ...[
    'containerd.toml',
    'kubelet.yaml',
    'kubelet.kubeconfig',
    'bootstrap.kubeconfig',
    'kubelet.env',
    'pki',
  ].map((f) => `${NodeState}/${f}`),
  ...NodeBins.map((b) => `/usr/local/bin/${b}`),
  '/molt/ephemeral/kubelet',
  '/molt/state',
  '/molt/ephemeral',
  '/bin/true',
  '/sbin/modprobe',
];

describe('the node units of deploy/image/kubernetes-node', () => {
  const unitDir = join(NodeRuntimeFiles, 'usr/lib/systemd/system');
  const unit = async (name: string) => parseUnit(await readFile(join(unitDir, name), 'utf8'));
  const get = (u: Map<string, Map<string, string[]>>, section: string, key: string): string =>
    (u.get(section)?.get(key) ?? []).join(' ');

  it('are the units the image enables, each wanted by multi-user.target', async () => {
    assert.deepEqual((await readdir(unitDir)).sort(), [...NodeRuntimeUnits].sort());
    for (const name of NodeRuntimeUnits)
      assert.equal(get(await unit(name), 'Install', 'WantedBy'), 'multi-user.target', name);
  });

  it('reference only the binaries the image ships and the files molt install writes', async () => {
    for (const name of NodeRuntimeUnits) {
      const text = (await readFile(join(unitDir, name), 'utf8'))
        .split('\n')
        .filter((l) => !l.startsWith('#') && !l.startsWith('Documentation='))
        .join('\n');
      for (const path of text.match(/\/[\w./-]+/g) ?? [])
        assert.ok(known.includes(path), `${name} names ${path}`);
    }
  });

  it('run containerd and the kubelet with their state on STATE and EPHEMERAL, only when configured', async () => {
    const containerd = await unit('containerd.service');
    assert.equal(
      get(containerd, 'Service', 'ExecStart'),
      `/usr/local/bin/containerd --config ${NodeState}/containerd.toml`,
    );
    assert.equal(get(containerd, 'Unit', 'ConditionPathExists'), `${NodeState}/containerd.toml`);
    assert.equal(get(containerd, 'Service', 'KillMode'), 'process');
    assert.equal(get(containerd, 'Service', 'Delegate'), 'yes');
    assert.equal(get(containerd, 'Unit', 'RequiresMountsFor'), '/molt/state /molt/ephemeral');

    const kubelet = await unit('kubelet.service');
    const exec = get(kubelet, 'Service', 'ExecStart').split(/\s+/);
    assert.equal(exec[0], '/usr/local/bin/kubelet');
    for (const flag of [
      `--config=${NodeState}/kubelet.yaml`,
      `--kubeconfig=${NodeState}/kubelet.kubeconfig`,
      `--bootstrap-kubeconfig=${NodeState}/bootstrap.kubeconfig`,
      `--cert-dir=${NodeState}/pki`,
      '--root-dir=/molt/ephemeral/kubelet',
      '$KUBELET_ARGS',
    ])
      assert.ok(exec.includes(flag), flag);
    assert.equal(get(kubelet, 'Service', 'EnvironmentFile'), `-${NodeState}/kubelet.env`);
    assert.equal(get(kubelet, 'Unit', 'ConditionPathExists'), `${NodeState}/kubelet.yaml`);
    assert.equal(get(kubelet, 'Unit', 'RequiresMountsFor'), '/molt/state /molt/ephemeral');
    assert.match(get(kubelet, 'Unit', 'Requires'), /\bcontainerd\.service\b/);
  });

  it('stop the kubelet, then every pod, then containerd', async () => {
    // systemd stops units in the reverse order of After=.
    const after = async (name: string) => get(await unit(name), 'Unit', 'After').split(/\s+/);
    const before = async (name: string) => get(await unit(name), 'Unit', 'Before').split(/\s+/);
    assert.ok((await after('kubelet.service')).includes('containerd.service'));
    assert.ok((await after('kubelet.service')).includes('molt-kube-pods.service'));
    assert.ok((await after('molt-kube-pods.service')).includes('containerd.service'));
    assert.ok((await before('molt-kube-pods.service')).includes('kubelet.service'));
    const pods = await unit('molt-kube-pods.service');
    assert.equal(get(pods, 'Service', 'Type'), 'oneshot');
    assert.equal(get(pods, 'Service', 'RemainAfterExit'), 'yes');
    assert.equal(get(pods, 'Service', 'ExecStop'), '-/usr/local/bin/crictl rmp --all --force');
    // A restart of containerd alone must not take every pod with it.
    assert.equal(get(pods, 'Unit', 'Requires'), '');
  });

  it('point crictl at containerd, forward and filter bridged traffic, load the modules', async () => {
    const etc = join(NodeRuntimeFiles, 'etc');
    const crictl = await readFile(join(etc, 'crictl.yaml'), 'utf8');
    assert.match(crictl, /^runtime-endpoint: unix:\/\/\/run\/containerd\/containerd\.sock$/m);
    assert.match(crictl, /^image-endpoint: unix:\/\/\/run\/containerd\/containerd\.sock$/m);
    const sysctl = (await readdir(join(etc, 'sysctl.d'))).map((f) => join(etc, 'sysctl.d', f));
    const settings = (await Promise.all(sysctl.map((f) => readFile(f, 'utf8')))).join('\n');
    assert.match(settings, /^net\.ipv4\.ip_forward = 1$/m);
    assert.match(settings, /^net\.bridge\.bridge-nf-call-iptables = 1$/m);
    const modules = await readFile(
      join(etc, 'modules-load.d', 'molt-kubernetes-node.conf'),
      'utf8',
    );
    const names = modules.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
    assert.deepEqual(names.sort(), ['br_netfilter', 'overlay']);
  });
});
