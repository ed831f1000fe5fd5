// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isMoltError } from '../core/errors.ts';
import { scratchDir } from '../testkit/scratch-dir.ts';
import { loadMachineConfig, machineConfigWarnings } from './config.ts';

async function rootWith(config: string | undefined, mode = 0o600): Promise<string> {
  const path = await scratchDir('config');
  await mkdir(join(path, 'state'), { recursive: true });
  if (config !== undefined) await writeFile(join(path, 'state', 'config.yaml'), config, { mode });
  return path;
}

describe('machine config', () => {
  it('refuses to start on a registry password others can read', async () => {
    const withPassword =
      'node: w1\nrole: worker\nbootloader: grub\nregistry: {host: reg.example, username: u, password: p}\n';
    const open = await rootWith(withPassword, 0o644);
    await assert.rejects(
      loadMachineConfig(open),
      (e) =>
        isMoltError(e, 'MOLT_SECRET_EXPOSED') &&
        e.hint === `chmod 600 ${join(open, 'state', 'config.yaml')}`,
    );
    const closed = await loadMachineConfig(await rootWith(withPassword, 0o600));
    assert.equal(closed.registry.password, 'p');
    // Nothing secret in it: its mode is the owner's business.
    await loadMachineConfig(await rootWith('node: w1\nrole: worker\nbootloader: grub\n', 0o644));
  });

  it('starts on registry credentials that name no registry, as configs from before registry.host, warning how to fix it', async () => {
    const head = 'node: w1\nrole: worker\nbootloader: grub\n';
    const cases = [
      ['{username: u, password: p}', /registry\.host/],
      ['{host: reg.example, username: u}', /registry\.username is set without registry\.password/],
      ['{password: p}', /registry\.password is set without registry\.username/],
    ] as const;
    for (const [registry, fix] of cases) {
      const config = await loadMachineConfig(await rootWith(`${head}registry: ${registry}\n`));
      const warnings = machineConfigWarnings(config);
      assert.equal(warnings.length, 1, registry);
      assert.match(
        warnings[0] ?? '',
        /^warning: the registry credentials are sent to no registry: /,
      );
      assert.match(warnings[0] ?? '', fix, registry);
    }
    for (const registry of ['{host: reg.example, username: u, password: p}', '{insecure: true}']) {
      const config = await loadMachineConfig(await rootWith(`${head}registry: ${registry}\n`));
      assert.deepEqual(machineConfigWarnings(config), [], registry);
    }
  });

  it('fills defaults for a worker', async () => {
    const config = await loadMachineConfig(
      await rootWith('node: w1\nrole: worker\nbootloader: grub\n'),
    );
    assert.equal(config.healthDeadlineSeconds, 300);
    assert.deepEqual(config.api, { host: '127.0.0.1', port: 0 });
    assert.equal(config.kubernetes, undefined, 'not a Kubernetes node unless configured');
  });

  it('defaults a Kubernetes node to draining as kubectl does, aborting and uncordoning at 10 min', async () => {
    const config = await loadMachineConfig(
      await rootWith('node: w1\nrole: worker\nbootloader: grub\nkubernetes: {kubeconfig: /k}\n'),
    );
    assert.deepEqual(config.kubernetes?.drain, {
      timeoutSeconds: 600,
      onTimeout: 'abort-and-uncordon',
      deleteEmptyDirData: false,
      force: false,
    });
  });

  for (const [name, text, field] of [
    ['missing file', undefined, /cannot read/],
    ['bad YAML', 'node: [', /not valid YAML/],
    [
      'unknown field',
      'node: w1\nrole: worker\nbootloader: grub\nextra: 1\n',
      /extra|unrecognized/i,
    ],
    ['bad node name', 'node: W_1\nrole: worker\nbootloader: grub\n', /node/],
    ['control plane without etcd', 'node: c1\nrole: control-plane\nbootloader: grub\n', /etcd/],
    [
      'worker with control-plane components',
      'node: w1\nrole: worker\nbootloader: grub\ncontrolPlane: {binaries: /k, components: {kube-apiserver: {port: 6443, args: [--a=1]}}}\n',
      /controlPlane: only a control-plane machine/,
    ],
    [
      'component argument that is not a flag',
      'node: c1\nrole: control-plane\nbootloader: grub\netcd: {name: c1, peerUrl: "http://a:1", clientUrl: "http://a:2", initialCluster: "c1=http://a:1", endpoints: ["http://a:2"]}\ncontrolPlane: {binaries: /k, components: {kube-apiserver: {port: 6443, args: [etcd-servers]}}}\n',
      /controlPlane\.components\.kube-apiserver\.args\.0: must be a flag/,
    ],
    [
      'component the agent does not run',
      'node: c1\nrole: control-plane\nbootloader: grub\netcd: {name: c1, peerUrl: "http://a:1", clientUrl: "http://a:2", initialCluster: "c1=http://a:1", endpoints: ["http://a:2"]}\ncontrolPlane: {binaries: /k, components: {kubelet: {port: 10250, args: [--a]}}}\n',
      /controlPlane\.components/,
    ],
    [
      'drain policy with an unknown timeout action',
      'node: w1\nrole: worker\nbootloader: grub\nkubernetes: {kubeconfig: k, drain: {onTimeout: retry}}\n',
      /kubernetes\.drain\.onTimeout/,
    ],
  ] as const) {
    it(`refuses a ${name} with MOLT_MACHINE_INVALID naming the problem`, async () => {
      await assert.rejects(
        loadMachineConfig(await rootWith(text)),
        (e: unknown) => isMoltError(e, 'MOLT_MACHINE_INVALID') && field.test(e.message),
      );
    });
  }
});
