// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, readFile, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../../../core/errors.ts';
import { renderComponent } from '../../../core/kubernetes/render.ts';
import { tempDir } from '../../../platform/process/managed-process.ts';
import { componentSupervisorConformance } from '../../../testkit/component-supervisor-conformance.ts';
import type { Services } from '../../ports/services.ts';
import { createProcessSupervisor, servicesInOrder } from './index.ts';

const sha256 = (t: string): string => createHash('sha256').update(t).digest('hex');

function recorder(name: string, calls: string[]): Services {
  return {
    startAll: () => Promise.resolve(void calls.push(`start ${name}`)),
    stopAll: () => Promise.resolve(void calls.push(`stop ${name}`)),
    running: () => Promise.resolve([name]),
  };
}

/** A machine root whose `bin/<component>` is node, so a "component" is a node script. */
async function labRoot() {
  const dir = await tempDir('molt-components');
  await mkdir(join(dir.path, 'bin'));
  for (const n of ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler'])
    await symlink(process.execPath, join(dir.path, 'bin', n));
  const spec = (name: string, script: string, variant = '') =>
    renderComponent({
      name,
      facts: { args: ['-e', script, '--', `--variant=${variant}`], port: 1, env: {} },
      binDir: join(dir.path, 'bin'),
      sha256,
    });
  return { dir, spec };
}

componentSupervisorConformance('lab processes', async () => {
  const { dir, spec } = await labRoot();
  const supervisor = createProcessSupervisor({ root: dir.path, stopGraceMs: 2_000 });
  return {
    supervisor,
    spec: (name, variant) => spec(name, 'setInterval(() => {}, 1000)', variant),
    close: async () => {
      for (const n of ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler'])
        await supervisor.stop(n);
      await dir.remove();
    },
  };
});

describe('lab machine services', () => {
  const roots: { remove(): Promise<void> }[] = [];
  after(async () => {
    for (const r of roots) await r.remove();
  });

  it('start in order and stop in reverse: etcd before the API server that needs it', async () => {
    const calls: string[] = [];
    const all = servicesInOrder([recorder('etcd', calls), recorder('kube-apiserver', calls)]);
    await all.startAll();
    await all.stopAll();
    assert.deepEqual(calls, [
      'start etcd',
      'start kube-apiserver',
      'stop kube-apiserver',
      'stop etcd',
    ]);
    assert.deepEqual(await all.running(), ['etcd', 'kube-apiserver']);
  });

  it('refuses a component the firmware could not end at a reboot (nothing in the machine root)', async () => {
    const s = createProcessSupervisor({ root: '/lab/cp-1' });
    const spec = renderComponent({
      name: 'kube-apiserver',
      facts: { args: ['--secure-port=6443'], port: 6443, env: {} },
      binDir: '/opt/kube',
      sha256,
    });
    await assert.rejects(s.run(spec), (e: unknown) => isMoltError(e, ErrorCode.MachineInvalid));
  });

  it('keeps pid and log at run/<name>.pid|log, and tails the output of the last start only', async () => {
    const { dir, spec } = await labRoot();
    roots.push(dir);
    const s = createProcessSupervisor({ root: dir.path, restartAfterMs: false });
    await s.run(spec('kube-scheduler', 'console.log("first start"); process.exit(1)', 'a'));
    await waitExited(s, 'kube-scheduler');
    await s.run(
      spec(
        'kube-scheduler',
        'console.log("Error: unknown flag --no-such-flag"); process.exit(1)',
        'b',
      ),
    );
    await waitExited(s, 'kube-scheduler');
    const tail = await s.logTail('kube-scheduler', 10);
    assert.equal(tail, 'Error: unknown flag --no-such-flag');
    const log = await readFile(join(dir.path, 'run', 'kube-scheduler.log'), 'utf8');
    assert.match(log, /first start/);
    const pid = Number(await readFile(join(dir.path, 'run', 'kube-scheduler.pid'), 'utf8'));
    assert.ok(pid > 0);
    assert.equal((await s.state('kube-scheduler')).running, false, 'an exited component is down');
  });

  it('starts a component that died by itself again on its spec, as Restart=always; never a stopped one', async () => {
    const { dir, spec } = await labRoot();
    roots.push(dir);
    const s = createProcessSupervisor({ root: dir.path, restartAfterMs: 100, stopGraceMs: 2_000 });
    const scheduler = spec('kube-scheduler', 'setInterval(() => {}, 1000)', 'a');
    await s.run(scheduler);
    const first = await s.state('kube-scheduler');
    assert.ok(first.pid !== undefined);
    process.kill(first.pid, 'SIGKILL'); // as a scheduler that lost its leader lease exits
    const again = await until(s, 'kube-scheduler', (st) => st.running && st.pid !== first.pid);
    assert.equal(again.hash, scheduler.hash, 'the same spec');
    const log = await readFile(join(dir.path, 'run', 'kube-scheduler.log'), 'utf8');
    assert.match(log, /\(restarted: it exited\)/);
    await s.stop('kube-scheduler');
    await new Promise((r) => setTimeout(r, 500));
    assert.equal((await s.state('kube-scheduler')).running, false, 'a stop stays a stop');
  });
});

async function until(
  s: ReturnType<typeof createProcessSupervisor>,
  name: string,
  ok: (st: Awaited<ReturnType<typeof s.state>>) => boolean,
) {
  for (let i = 0; i < 200; i++) {
    const st = await s.state(name);
    if (ok(st)) return st;
    await new Promise((r) => setTimeout(r, 50));
  }
  return s.state(name);
}

async function waitExited(s: ReturnType<typeof createProcessSupervisor>, name: string) {
  for (let i = 0; i < 100 && (await s.state(name)).running; i++)
    await new Promise((r) => setTimeout(r, 50));
}
