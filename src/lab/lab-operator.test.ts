// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readFile, stat } from 'node:fs/promises';
import { parse, parseAllDocuments } from 'yaml';
import { parsePoolSpec } from '../protocol/kube-resources.ts';
import { initCaDir } from '../platform/pki/store.ts';
import { tempDir } from '../platform/process/managed-process.ts';
import { sha256Hex } from '../platform/pki/tokens.ts';
import { FleetFile } from '../protocol/fleet-schema.ts';
import { OperatorConfig } from '../protocol/operator-config.ts';
import type { LabFleet } from './fleet/fleet.ts';
import { labPools, writeOperatorConfig } from './lab-operator.ts';

const setup = { fast: false, ports: { api: 0, dashboard: 0 } };

describe('the lab operator pools', () => {
  it('gives VMs a pool of their own on channel vm: a canary, then two at a time', () => {
    const pools = labPools({ ...setup, workers: 2, vms: 3 });
    assert.deepEqual(
      pools.map((p) => [p.name, p.channel]),
      [
        ['control-plane', 'stable'],
        ['workers', 'beta'],
        ['vms', 'vm'],
      ],
    );
    const snapshot = FleetFile.parse({ pools, machines: [] });
    const vms = snapshot.pools.find((p) => p.name === 'vms');
    assert.ok(vms !== undefined);
    assert.deepEqual(
      vms.policies.map((p) => p.kind),
      ['canary', 'concurrency', 'failure-budget'],
    );
    assert.deepEqual(vms.policies.at(1), { kind: 'concurrency', limit: { count: 2 } });
  });

  it('leaves out pools without machines', () => {
    assert.deepEqual(
      labPools({ ...setup, workers: 0, vms: 1 }).map((p) => p.name),
      ['control-plane', 'vms'],
    );
    assert.deepEqual(
      labPools({ ...setup, workers: 3, vms: 0 }).map((p) => p.name),
      ['control-plane', 'workers'],
    );
  });
});

/** A directory with a fleet CA, and the parts of a lab fleet the operator's files need. */
async function scratchFleet() {
  const dir = await tempDir('lab-operator');
  await initCaDir(dir.path);
  const fleet = {
    dir: dir.path,
    machines: [],
    registry: { host: '127.0.0.1:5000' },
    pki: { dir: dir.path },
    storeEndpoints: ['http://127.0.0.1:2379'],
  } as unknown as LabFleet;
  return { dir, fleet };
}

describe('the lab operator’s dashboard', () => {
  it('lets anyone read and the lab user, an admin, act with the token in a 0600 file', async () => {
    const { dir, fleet } = await scratchFleet();
    try {
      const files = await writeOperatorConfig({ ...setup, workers: 0, vms: 0 }, fleet, []);
      const config = OperatorConfig.parse(parse(await readFile(files.config, 'utf8')));
      const token = (await readFile(files.dashboardToken, 'utf8')).trim();
      assert.equal((await stat(files.dashboardToken)).mode & 0o777, 0o600);
      assert.equal(config.dashboard?.anonymousRead, true);
      assert.deepEqual(config.dashboard.users, [
        { name: 'lab', role: 'admin', tokenSha256: sha256Hex(token) },
      ]);
    } finally {
      await dir.remove();
    }
  });
});

describe('the lab operator’s leadership beside VMs', () => {
  it('holds its claim 30 s, so a host starved by QEMU machines does not cost it the lead', async () => {
    for (const [vms, ttl] of [
      [2, 30_000],
      [0, 10_000], // the default claim without VMs
    ] as const) {
      const { dir, fleet } = await scratchFleet();
      try {
        const files = await writeOperatorConfig({ ...setup, workers: 0, vms }, fleet, []);
        const config = OperatorConfig.parse(parse(await readFile(files.config, 'utf8')));
        assert.equal(config.leaderTtl, ttl, `with ${String(vms)} VMs`);
      } finally {
        await dir.remove();
      }
    }
  });
});

describe('the lab operator’s pools with Kubernetes', () => {
  it('declares them as molt.dev Pools to apply, and the fleet file lists machines only', async () => {
    const { dir, fleet } = await scratchFleet();
    try {
      const o = { ...setup, workers: 3, vms: 0, kubeconfig: 'operator.kubeconfig' };
      const files = await writeOperatorConfig(o, fleet, []);
      assert.ok(files.pools !== undefined);
      type PoolObject = { kind: string; metadata: { name: string }; spec: object };
      const objects = parseAllDocuments(await readFile(files.pools, 'utf8')).map(
        (d): PoolObject => d.toJS() as PoolObject,
      );
      assert.deepEqual(
        objects.map((x) => [x.kind, x.metadata.name]),
        [
          ['Pool', 'control-plane'],
          ['Pool', 'workers'],
        ],
      );
      for (const x of objects) {
        const parsed = parsePoolSpec(x.metadata.name, x.spec);
        assert.ok('pool' in parsed, `the operator accepts ${x.metadata.name}`);
      }
      const config = OperatorConfig.parse(parse(await readFile(files.config, 'utf8')));
      const fleetFile = parse(await readFile(config.fleet, 'utf8')) as { pools: unknown[] };
      assert.deepEqual(fleetFile.pools, []);
      assert.equal(config.kubernetes?.declared, true);
      const again = await scratchFleet();
      try {
        const plain = await writeOperatorConfig({ ...o, kubeconfig: undefined }, again.fleet, []);
        assert.equal(plain.pools, undefined, 'without Kubernetes the pools stay in the fleet file');
      } finally {
        await again.dir.remove();
      }
    } finally {
      await dir.remove();
    }
  });
});
