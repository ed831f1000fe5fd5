// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isMoltError } from '../core/errors.ts';
import { freePort } from '../platform/process/free-port.ts';
import { runLab } from './main.ts';
import { writeLabState } from './state.ts';

const io = { out: () => undefined, err: () => undefined };

describe('molt lab', () => {
  for (const [name, argv] of [
    ['unknown verb', ['upp']],
    ['too many workers', ['up', '--workers', '99']],
    ['no workers with Kubernetes', ['up', '--workers', '0']],
    ['too many VMs', ['up', '--vms', '9']],
    ['a VM count that is no number', ['up', '--vms', 'two', '--no-kubernetes']],
    ['an unknown output format', ['status', '-o', 'yaml']],
    ['a bad dashboard port', ['up', '--dashboard-port', 'x']],
    ['an unknown network mode', ['up', '--network', 'bridge']],
    ['an unknown operator place', ['up', '--operator', 'moon']],
    ['the operator in a cluster without VMs', ['up', '--operator', 'cluster']],
    [
      'the operator in a cluster without Kubernetes',
      ['up', '--operator', 'cluster', '--vms', '1', '--no-kubernetes'],
    ],
    [
      'the operator in a cluster without the bridge',
      ['up', '--operator', 'cluster', '--vms', '1', '--network', 'loopback'],
    ],
    ['too many control-plane VMs', ['up', '--vms', '1', '--vm-control-planes', '4']],
    ['control-plane VMs without worker VMs', ['up', '--vm-control-planes', '1']],
    [
      'control-plane VMs without the bridge',
      ['up', '--vms', '1', '--vm-control-planes', '1', '--network', 'loopback'],
    ],
    [
      'control-plane VMs without Kubernetes',
      ['up', '--vms', '1', '--vm-control-planes', '1', '--no-kubernetes'],
    ],
    ['publish without a version', ['publish', '--dir', '/nonexistent']],
    ['a broken kubelet without --vm', ['publish', '9.9.9', '--broken-kubelet', '--dir', '/none']],
    [
      'a broken kubelet and a broken kernel at once',
      ['publish', '9.9.9', '--vm', '--broken', '--broken-kubelet', '--dir', '/nonexistent'],
    ],
    ['a flag of another verb', ['down', '--workers', '3', '--dir', '/nonexistent']],
    ['up’s --fast on publish', ['publish', '9.9.9', '--fast', '--dir', '/nonexistent']],
    ['no root', ['machine']],
    ['unknown bootloader', ['machine', '--root', '/nonexistent', '--bootloader', 'lilo']],
    ['bad deadline', ['machine', '--root', '/nonexistent', '--health-deadline', '-3']],
    ['unknown flag', ['machine', '--root', '/nonexistent', '--colour']],
  ] as const) {
    it(`refuses ${name} with MOLT_BAD_FLAG before touching anything`, async () => {
      await assert.rejects(runLab(argv, io, []), (e: unknown) => isMoltError(e, 'MOLT_BAD_FLAG'));
    });
  }

  for (const version of ['notaversion', '1.2', '01.2.3', '1.2.3+build.5']) {
    it(`refuses to publish ${version}, not a semver version, before looking for a lab`, async () => {
      await assert.rejects(runLab(['publish', version, '--dir', '/nonexistent'], io, []), (e) => {
        assert.ok(isMoltError(e, 'MOLT_INVALID_VERSION'), String(e));
        assert.equal(
          e.message,
          `"${version}" is not a semver version, so the operator would never see it`,
        );
        assert.match(e.hint ?? '', /molt lab publish 1\.2\.0/);
        return true;
      });
    });
  }

  it('says which operator a running lab’s status cannot reach, and why — not `fetch failed`', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'molt-lab-'));
    const port = await freePort();
    const dashboard = `http://127.0.0.1:${String(port)}`;
    try {
      // A lab whose daemon (this process, alive) runs while its operator does not answer.
      await writeLabState(dir, {
        ...{ pid: process.pid, state: 'ready', startedAt: '2026-11-26T00:00:00Z', dir },
        ...{ registry: '127.0.0.1:5000', repository: 'molt/installer', pki: dir, machines: [] },
        operator: { api: 'https://127.0.0.1:7443', dashboard },
      });
      await assert.rejects(runLab(['status', '--dir', dir], io, []), (e: unknown) => {
        assert.ok(isMoltError(e, 'MOLT_OPERATOR_UNREACHABLE'), String(e));
        assert.equal(
          e.message,
          `cannot reach the lab's operator at ${dashboard}: connection refused: nothing listens there (ECONNREFUSED)`,
        );
        assert.match(e.hint ?? '', /molt lab down/);
        return true;
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  for (const verb of [
    'status',
    'down',
    'env',
    'publish 9.9.9',
    'publish 9.9.9 --vm --broken',
    'publish 9.9.9 --vm --broken-kubelet',
  ]) {
    it(`says no lab runs (MOLT_LAB_NOT_RUNNING) for ${verb} in an empty directory`, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'molt-lab-'));
      try {
        await assert.rejects(runLab([...verb.split(' '), '--dir', dir], io, []), (e: unknown) =>
          isMoltError(e, 'MOLT_LAB_NOT_RUNNING'),
        );
      } finally {
        await rm(dir, { recursive: true });
      }
    });
  }

  it('refuses a broken kubelet in a lab without Kubernetes (its VMs run none), pushing nothing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'molt-lab-'));
    try {
      // No registry listens at this address: a publish that got as far as pushing would fail otherwise.
      await writeLabState(dir, {
        ...{ pid: process.pid, state: 'ready', startedAt: '2026-11-26T00:00:00Z', dir },
        ...{ registry: '127.0.0.1:1', repository: 'molt/installer', pki: dir, machines: [] },
        operator: { api: 'https://127.0.0.1:7443', dashboard: 'http://127.0.0.1:1' },
      });
      await assert.rejects(
        runLab(['publish', '9.9.9', '--vm', '--broken-kubelet', '--dir', dir], io, []),
        (e: unknown) => {
          assert.ok(isMoltError(e, 'MOLT_BAD_FLAG'), String(e));
          assert.equal(
            e.message,
            '--broken-kubelet needs a lab with Kubernetes: without it the VMs run no kubelet',
          );
          return true;
        },
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('runs kubectl only on a running lab (MOLT_LAB_DIR), passing `--help` through to it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'molt-lab-'));
    try {
      const env = { MOLT_LAB_DIR: dir };
      let out = '';
      await assert.rejects(
        runLab(
          ['kubectl', 'get', '--help'],
          { out: (t) => (out += t), err: () => undefined, env },
          [],
        ),
        (e: unknown) => isMoltError(e, 'MOLT_LAB_NOT_RUNNING') && e.message.includes(dir),
      );
      assert.equal(out, '', 'not the lab’s own help');
    } finally {
      await rm(dir, { recursive: true });
    }
  });

  it('prints the lab usage with no verb', async () => {
    let out = '';
    assert.equal(await runLab([], { out: (t) => (out += t), err: () => undefined }, []), 0);
    assert.match(out, /molt lab up/);
  });

  it('prints its usage on --help', async () => {
    let out = '';
    assert.equal(
      await runLab(['machine', '--help'], { out: (t) => (out += t), err: () => undefined }, []),
      0,
    );
    assert.match(out, /--bootloader/);
  });

  for (const verb of ['up', 'status', 'env', 'publish', 'down'])
    it(`prints only ${verb}'s usage on \`molt lab ${verb} --help\` and \`molt lab help ${verb}\``, async () => {
      for (const argv of [
        [verb, '--help'],
        ['help', verb],
      ]) {
        let out = '';
        const sink = { out: (t: string) => (out += t), err: () => undefined };
        assert.equal(await runLab(argv, sink, []), 0);
        assert.match(out, new RegExp(`^Usage: molt lab ${verb} `));
        const others = ['up', 'status', 'env', 'publish', 'down'].filter((v) => v !== verb);
        for (const other of others)
          assert.doesNotMatch(
            out,
            new RegExp(`Usage: molt lab ${other}|^ +molt lab ${other}`, 'm'),
          );
      }
    });
});
