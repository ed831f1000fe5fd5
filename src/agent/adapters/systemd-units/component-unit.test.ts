// SPDX-License-Identifier: Apache-2.0
// Control-plane components as systemd units, against a FAKE systemctl (src/testkit/
// systemctl-standin.ts: no machine here runs systemd as PID 1) and, for the unit files themselves,
// the real `systemd-analyze verify` when the machine has it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, describe, it } from 'node:test';
import { ErrorCode } from '../../../core/errors.ts';
import { renderComponent } from '../../../core/kubernetes/render.ts';
import { tempDir } from '../../../platform/process/managed-process.ts';
import { componentSupervisorConformance } from '../../../testkit/component-supervisor-conformance.ts';
import { createSystemctlStandIn } from '../../../testkit/systemctl-standin.ts';
import { waitHealthy } from '../../machine/control-plane-wait.ts';
import { componentUnit, createSystemdComponents, systemdArg } from './component-unit.ts';
import { createSystemctl } from './systemctl.ts';

const run = promisify(execFile);
const sha256 = (t: string): string => createHash('sha256').update(t).digest('hex');
const spec = (name: string, variant: string, binDir = '/var/lib/molt/state/kubernetes/abc') =>
  renderComponent({
    name,
    facts: {
      args: ['--secure-port=10259', `--kubeconfig=/etc/kubernetes/${name}.conf`, `--v=${variant}`],
      port: 10259,
      env: { GOMAXPROCS: '2' },
    },
    binDir,
    sha256,
  });

async function machine() {
  const dir = await tempDir('molt-units');
  const unitDir = join(dir.path, 'units');
  await mkdir(unitDir);
  const fake = await createSystemctlStandIn({}, { unitDir });
  const journal = join(dir.path, 'journalctl');
  await writeFile(
    journal,
    '#!/bin/sh\necho "$*" > "$(dirname "$0")/journal-args"\necho "E1127 bad flag"\n',
  );
  await chmod(journal, 0o755);
  const supervisor = createSystemdComponents({
    systemctl: createSystemctl(fake.path),
    journalctl: createSystemctl(journal),
    unitDir,
    stateDir: join(dir.path, 'molt'),
  });
  return {
    dir,
    unitDir,
    fake,
    supervisor,
    close: async () => {
      await fake.remove();
      await dir.remove();
    },
  };
}

componentSupervisorConformance('systemd units (FAKE systemctl)', async () => {
  const m = await machine();
  return { supervisor: m.supervisor, spec: (n, v) => spec(n, v), close: m.close };
});

describe('control-plane components as systemd units', () => {
  const open: { close(): Promise<void> }[] = [];
  after(async () => {
    for (const m of open) await m.close();
  });

  it('writes molt-<name>.service, reloads systemd and restarts only on a new spec', async () => {
    const m = await machine();
    open.push(m);
    await m.supervisor.run(spec('kube-scheduler', '1'));
    const unit = await readFile(join(m.unitDir, 'molt-kube-scheduler.service'), 'utf8');
    assert.equal(unit, componentUnit(spec('kube-scheduler', '1')));
    await m.supervisor.run(spec('kube-scheduler', '1'));
    await m.supervisor.run(spec('kube-scheduler', '2'));
    const acts = (await m.fake.calls()).filter((c) => !c.startsWith('show'));
    assert.deepEqual(acts, [
      'daemon-reload',
      'restart molt-kube-scheduler.service',
      'daemon-reload',
      'restart molt-kube-scheduler.service',
    ]);
    assert.equal(await m.fake.unitState('molt-kube-scheduler.service'), 'active');
  });

  it('sees a unit whose process exited as stopped while systemd waits to restart it, so a refused flag is given up on at once', async () => {
    const m = await machine();
    open.push(m);
    const s = spec('kube-scheduler', '1');
    await m.supervisor.run(s);
    assert.equal((await m.supervisor.state('kube-scheduler')).running, true);
    await m.fake.setUnit('molt-kube-scheduler.service', 'auto-restart');
    assert.deepEqual(await m.supervisor.state('kube-scheduler'), { running: false });
    const clock = { now: () => 0, sleep: () => Promise.reject(new Error('waited')) };
    const probe = {
      healthy: () => Promise.resolve({ ok: false, message: 'connection refused' }),
      listening: () => Promise.resolve(false),
    };
    const waits = { supervisor: m.supervisor, probe, clock };
    assert.equal(await waitHealthy(waits, s, 600_000), 'it exited');
  });

  it('tails the unit’s journal', async () => {
    const m = await machine();
    open.push(m);
    assert.equal(await m.supervisor.logTail('kube-apiserver', 40), 'E1127 bad flag');
    const args = await readFile(join(m.dir.path, 'journal-args'), 'utf8');
    assert.equal(args.trim(), '-u molt-kube-apiserver.service -n 40 --no-pager -o cat');
  });

  it('quotes arguments as systemd parses them: specifiers, variables, spaces, quotes', () => {
    assert.equal(
      systemdArg('--etcd-servers=https://10.0.0.1:2379'),
      '--etcd-servers=https://10.0.0.1:2379',
    );
    assert.equal(systemdArg('--x=50%'), '"--x=50%%"');
    assert.equal(systemdArg('--home=$HOME'), '"--home=$$HOME"');
    assert.equal(systemdArg('a b"c\\'), '"a b\\"c\\\\"');
  });

  it('refuses an argument with a control character instead of writing a broken unit', () => {
    for (const arg of ['--a=1\nExecStartPre=/bin/sh', '--a=\r', '--a=\u0000'])
      assert.throws(() => systemdArg(arg), { code: ErrorCode.KubeFlagInvalid });
  });

  it('renders units systemd-analyze verify accepts', async (t) => {
    const ok = await run('systemd-analyze', ['--version']).then(
      () => true,
      () => false,
    );
    if (!ok) {
      t.skip('systemd-analyze is not installed here');
      return;
    }
    const { path, remove } = await tempDir('molt-unit-verify');
    try {
      await mkdir(join(path, 'bin'));
      await writeFile(join(path, 'bin', 'kube-apiserver'), '#!/bin/sh\n');
      await chmod(join(path, 'bin', 'kube-apiserver'), 0o755);
      const s = renderComponent({
        name: 'kube-apiserver',
        facts: {
          args: ['--secure-port=6443', '--audit-policy=50% of "all"', '--token=$T'],
          port: 6443,
          env: { A: 'one two' },
        },
        binDir: join(path, 'bin'),
        sha256,
      });
      const file = join(path, 'molt-kube-apiserver.service');
      await writeFile(file, componentUnit(s));
      const r = await run('systemd-analyze', ['verify', file]).then(
        (x) => ({ code: 0, stderr: x.stderr }),
        (e: unknown) => {
          const x = e as { code: number; stderr: string };
          return { code: x.code, stderr: x.stderr };
        },
      );
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stderr, new RegExp('molt-kube-apiserver'), r.stderr);
    } finally {
      await remove();
    }
  });
});
