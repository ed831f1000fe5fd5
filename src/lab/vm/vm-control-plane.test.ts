// SPDX-License-Identifier: Apache-2.0
// A lab control-plane VM's config: accepted by the agent's schema, and every file its components'
// flags name is one `molt pki kubernetes` writes — checked against a PKI made here, whose serving
// certificate names the VM's bridge address and the service CIDR's first address.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { writeKubernetesPki } from '../../platform/pki/kubernetes.ts';
import { tempDir } from '../../platform/process/managed-process.ts';
import { MachineConfig } from '../../protocol/machine-config.ts';
import { apiServerUrl, controlPlaneVmConfig, StatePkiDir } from './vm-control-plane.ts';

const one = {
  name: 'cp-1',
  address: '10.231.0.20',
  members: [{ name: 'cp-1', address: '10.231.0.20' }],
  cluster: 'lab',
  version: 'v1.35.4',
  bootstrap: true,
};

const parse = (c: object) => MachineConfig.parse({ node: 'cp-1', bootloader: 'grub', ...c });

describe('a lab control-plane VM', () => {
  let dir: { path: string; remove: () => Promise<void> };
  before(async () => {
    dir = await tempDir('vm-control-plane');
    await writeKubernetesPki({ cluster: 'lab', dir: dir.path, server: apiServerUrl(one.address) });
  });
  after(() => dir.remove());

  it("is a config the agent accepts: one etcd member, the image's binaries, the bootstrap", () => {
    const c = parse(controlPlaneVmConfig(one));
    assert.equal(c.etcd?.initialCluster, 'cp-1=http://10.231.0.20:2380');
    assert.equal(c.controlPlane?.binaries, '/usr/lib/molt/kubernetes/bin');
    assert.deepEqual(c.controlPlane.pki, { cluster: 'lab', dir: StatePkiDir });
    assert.deepEqual(c.controlPlane.bootstrap, { ttlHours: 24 });
    const cm = c.controlPlane.components['kube-controller-manager']?.args ?? [];
    assert.ok(cm.includes('--leader-elect=false'));
  });

  it('names only files the PKI has, and its serving certificate covers the addresses the flags use', async () => {
    const c = parse(controlPlaneVmConfig(one));
    const files = Object.values(c.controlPlane?.components ?? {}).flatMap((k) =>
      (k?.args ?? []).flatMap((a) => {
        const value = a.slice(a.indexOf('=') + 1);
        return value.startsWith(`${StatePkiDir}/`) ? [value] : [];
      }),
    );
    assert.ok(files.length >= 15, files.join('\n'));
    for (const f of files) await access(join(dir.path, f.slice(StatePkiDir.length)));
    const serving = new X509Certificate(await readFile(join(dir.path, 'pki', 'apiserver.crt')));
    const api = c.controlPlane?.components['kube-apiserver']?.args ?? [];
    const advertised = api.find((a) => a.startsWith('--advertise-address='))?.split('=')[1];
    assert.ok(serving.checkIP(advertised ?? ''), serving.subjectAltName);
    assert.ok(api.includes('--service-cluster-ip-range=10.96.0.0/12'));
    assert.ok(serving.checkIP('10.96.0.1'), serving.subjectAltName);
  });

  it('of three: every member in etcd and the API servers, leader election on, one bootstrap', () => {
    const members = [1, 2, 3].map((i) => ({
      name: `cp-${String(i)}`,
      address: `10.231.0.2${String(i)}`,
    }));
    const configs = members.map((m, i) =>
      parse(controlPlaneVmConfig({ ...one, ...m, members, bootstrap: i === 0 })),
    );
    for (const c of configs) {
      assert.equal(c.etcd?.endpoints.length, 3);
      const api = c.controlPlane?.components['kube-apiserver']?.args ?? [];
      assert.ok(
        api.includes(
          '--etcd-servers=http://10.231.0.21:2379,http://10.231.0.22:2379,http://10.231.0.23:2379',
        ),
      );
      assert.ok(c.controlPlane?.components['kube-scheduler']?.args.includes('--leader-elect=true'));
    }
    assert.deepEqual(
      configs.map((c) => c.controlPlane?.bootstrap !== undefined),
      [true, false, false],
    );
  });
});
