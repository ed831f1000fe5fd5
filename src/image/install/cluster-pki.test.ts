// SPDX-License-Identifier: Apache-2.0
// A control-plane machine's `controlPlane.pki`: where on STATE its cluster PKI goes, refused
// anywhere the machine's read-only root would hide it, and defaulted to kubeadm's layout under
// /molt/state/kubernetes. The install's checks of the PKI itself are in
// test/integration/install-bad-input.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MachineConfig } from '../../protocol/machine-config.ts';

const config = (pki: unknown, bootstrap?: unknown) => ({
  node: 'cp-1',
  role: 'control-plane',
  bootloader: 'grub',
  etcd: {
    name: 'cp-1',
    peerUrl: 'https://10.231.0.11:2380',
    clientUrl: 'https://10.231.0.11:2379',
    initialCluster: 'cp-1=https://10.231.0.11:2380',
    endpoints: ['https://10.231.0.11:2379'],
  },
  controlPlane: {
    binaries: '/usr/lib/molt/kube',
    components: { 'kube-apiserver': { port: 6443, args: ['--secure-port=6443'] } },
    pki,
    ...(bootstrap !== undefined && { bootstrap }),
  },
});

function refused(pki: unknown): string {
  const r = MachineConfig.safeParse(config(pki));
  assert.equal(r.success, false, JSON.stringify(pki));
  const i = r.error.issues[0];
  return `${i?.path.join('.') ?? ''}: ${i?.message ?? ''}`;
}

describe('controlPlane.pki', () => {
  it('defaults the directory to /molt/state/kubernetes', () => {
    const c = MachineConfig.parse(config({ cluster: 'prod' }));
    assert.deepEqual(c.controlPlane?.pki, { cluster: 'prod', dir: '/molt/state/kubernetes' });
  });

  it('refuses a directory off STATE, one that climbs out of it, and a nameless cluster', () => {
    assert.match(
      refused({ cluster: 'prod', dir: '/etc/kubernetes' }),
      /^controlPlane\.pki\.dir: a directory under \/molt\/state\//,
    );
    assert.match(
      refused({ cluster: 'prod', dir: '/molt/state/../../etc' }),
      /^controlPlane\.pki\.dir: no \.\. in the path/,
    );
    assert.match(refused({ cluster: '' }), /^controlPlane\.pki\.cluster: /);
    assert.match(refused({ cluster: 'prod', extra: 1 }), /^controlPlane\.pki: /);
  });
});

describe('controlPlane.bootstrap', () => {
  it("registers the PKI's token for a day unless told otherwise", () => {
    const c = MachineConfig.parse(config({ cluster: 'prod' }, {}));
    assert.deepEqual(c.controlPlane?.bootstrap, { ttlHours: 24 });
  });

  it('needs the PKI it acts with', () => {
    const issues = (bootstrap: unknown, pki?: unknown): string => {
      const r = MachineConfig.safeParse(config(pki, bootstrap));
      assert.equal(r.success, false);
      return r.error.issues.map((e) => `${e.path.join('.')}: ${e.message}`).join('\n');
    };
    assert.match(
      issues({ tokenFile: '/molt/state/t' }),
      /controlPlane\.bootstrap: bootstrapping the cluster needs its PKI/,
    );
    assert.match(
      issues({ ttlHours: 0 }, { cluster: 'prod' }),
      /^controlPlane\.bootstrap\.ttlHours: /,
    );
  });
});
