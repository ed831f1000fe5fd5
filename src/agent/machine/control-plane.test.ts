// SPDX-License-Identifier: Apache-2.0
// The control-plane service on fakes: what restarts, what is recorded, and where the machine ends
// when a component does not come up.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { ErrorCode, isMoltError } from '../../core/errors.ts';
import type { ComponentFacts } from '../../core/kubernetes/render.ts';
import { ComponentApplyBody } from '../../protocol/agent-kubernetes.ts';
import type { Clock } from '../ports/clock.ts';
import {
  createFakeBundles,
  createFakeProbe,
  createFakeSupervisor,
  createInMemoryRecords,
} from '../ports/control-plane.fake.ts';
import { createControlPlane } from './control-plane.ts';

const sha256 = (t: string): string => createHash('sha256').update(t).digest('hex');
const v136 = `reg/kube@sha256:${'6'.repeat(64)}`;
const v137 = `reg/kube@sha256:${'7'.repeat(64)}`;
const facts = (port: number): ComponentFacts => ({
  args: [`--secure-port=${String(port)}`, '--kubeconfig=/m/kubeconfig'],
  port,
  env: {},
});

/** A clock whose sleeps pass at once (the bound is counted, not waited). */
function instantClock(): Clock & { slept: number } {
  let now = 0;
  const c = {
    slept: 0,
    now: () => now,
    sleep: (ms: number) => {
      now += ms;
      c.slept += ms;
      return Promise.resolve();
    },
  };
  return c;
}

function machine(
  components = ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler'],
  slowListen: (port: number, now: number) => boolean = () => false,
) {
  const supervisor = createFakeSupervisor();
  const bundles = createFakeBundles({ [v136]: 'v1.36.3', [v137]: 'v1.37.0' });
  const records = createInMemoryRecords();
  const clock = instantClock();
  const probe = createFakeProbe(supervisor);
  const ports = [6443, 10257, 10259];
  const cp = createControlPlane({
    components: Object.fromEntries(components.map((n, i) => [n, facts(ports[i] ?? 1)])),
    initial: { binaries: '/opt/kube', version: 'v1.35.4' },
    supervisor,
    probe: {
      ...probe,
      listening: async (port) => !slowListen(port, clock.now()) && (await probe.listening(port)),
    },
    bundles,
    records,
    clock,
    sha256,
    healthTimeoutMs: 90_000,
  });
  return { cp, supervisor, bundles, records, clock };
}

const body = (o: Partial<ComponentApplyBody> = {}): ComponentApplyBody =>
  ComponentApplyBody.parse({ version: 'v1.36.3', bundle: v136, ...o });

const pids = async (m: ReturnType<typeof machine>): Promise<(number | undefined)[]> =>
  (await m.cp.status()).components.map((c) => c.pid);

describe('the control plane of a machine', () => {
  it('starts the initial components in order after etcd, and stops them in reverse', async () => {
    const m = machine();
    await m.cp.services.startAll();
    await m.cp.services.stopAll();
    assert.deepEqual(
      m.supervisor.calls.map((c) => c.split(' ').slice(0, 2).join(' ')),
      [
        'run kube-apiserver',
        'run kube-controller-manager',
        'run kube-scheduler',
        'stop kube-scheduler',
        'stop kube-controller-manager',
        'stop kube-apiserver',
      ],
    );
  });

  it('reports the initial version and binaries before any apply', async () => {
    const m = machine();
    await m.cp.services.startAll();
    const s = await m.cp.status();
    assert.deepEqual(
      s.components.map((c) => [c.name, c.version, c.running, c.healthy]),
      [
        ['kube-apiserver', 'v1.35.4', true, true],
        ['kube-controller-manager', 'v1.35.4', true, true],
        ['kube-scheduler', 'v1.35.4', true, true],
      ],
    );
    assert.equal(m.supervisor.spec('kube-apiserver')?.binary, '/opt/kube/kube-apiserver');
  });

  it('applies one component: stages the bundle, restarts only it, records it', async () => {
    const m = machine();
    await m.cp.services.startAll();
    const [api, kcm, sched] = await pids(m);
    const view = await m.cp.apply('kube-apiserver', body({ emulatedVersion: '1.35' }));
    assert.equal(view.version, 'v1.36.3');
    assert.equal(view.emulatedVersion, '1.35');
    assert.equal(view.healthy, true);
    const after = await pids(m);
    assert.notEqual(after[0], api, 'the API server restarted');
    assert.deepEqual([after[1], after[2]], [kcm, sched], 'the others did not');
    assert.deepEqual(m.bundles.pulls, [v136]);
    const spec = m.supervisor.spec('kube-apiserver');
    assert.equal(spec?.binary, `/m/state/kubernetes/${'6'.repeat(64)}/kube-apiserver`);
    assert.ok(spec.args.includes('--emulated-version=kube=1.35'));
    assert.equal(m.records.saved['kube-apiserver']?.spec.hash, view.hash);
  });

  it('answers a repeated apply at once: no restart, no pull', async () => {
    const m = machine();
    await m.cp.services.startAll();
    await m.cp.apply('kube-apiserver', body());
    const calls = m.supervisor.calls.length;
    const before = await pids(m);
    const again = await m.cp.apply('kube-apiserver', body());
    assert.equal(again.healthy, true);
    assert.equal(m.supervisor.calls.length, calls);
    assert.deepEqual(await pids(m), before);
    assert.deepEqual(m.bundles.pulls, [v136]);
  });

  it('restores the previous spec when the new one exits, and says why with the log', async () => {
    const m = machine();
    await m.cp.services.startAll();
    await m.cp.apply('kube-apiserver', body());
    const good = m.supervisor.spec('kube-apiserver')?.hash;
    m.supervisor.exits = (spec) => spec.args.includes('--no-such-flag=x');
    await assert.rejects(
      m.cp.apply('kube-apiserver', body({ extraArgs: { 'no-such-flag': 'x' } })),
      (e: unknown) =>
        isMoltError(e, ErrorCode.KubeComponentUnhealthy) &&
        /it exited/.test(e.message) &&
        /unknown flag/.test(e.message) &&
        /previous spec \(v1\.36\.3\) again, healthy/.test(e.message),
    );
    assert.equal(m.supervisor.spec('kube-apiserver')?.hash, good, 'back on the previous spec');
    assert.equal(m.records.saved['kube-apiserver']?.spec.hash, good, 'the record unchanged');
    const api = (await m.cp.status()).components[0];
    assert.equal(api?.version, 'v1.36.3');
    assert.equal(api.healthy, true);
  });

  it('waits out the bound for a component that runs but never becomes healthy', async () => {
    const m = machine();
    await m.cp.services.startAll();
    m.supervisor.sick = (spec) => spec.binary.includes('7777');
    await assert.rejects(
      m.cp.apply('kube-scheduler', body({ version: 'v1.37.0', bundle: v137 })),
      (e: unknown) =>
        isMoltError(e, ErrorCode.KubeComponentUnhealthy) && /after 90 s/.test(e.message),
    );
    assert.ok(m.clock.slept >= 90_000, `waited the bound (${String(m.clock.slept)} ms)`);
    assert.equal(m.supervisor.spec('kube-scheduler')?.binary, '/opt/kube/kube-scheduler');
    assert.deepEqual(m.records.saved, {}, 'nothing recorded');
  });

  it('refuses before anything moves: an overriding flag, a bundle of another version', async () => {
    const m = machine();
    await m.cp.services.startAll();
    const calls = m.supervisor.calls.length;
    await assert.rejects(
      m.cp.apply('kube-apiserver', body({ extraArgs: { kubeconfig: '/elsewhere' } })),
      (e: unknown) => isMoltError(e, ErrorCode.BadInput) && /--kubeconfig/.test(e.message),
    );
    await assert.rejects(m.cp.apply('kube-apiserver', body({ version: 'v1.36.4' })), (e: unknown) =>
      isMoltError(e, ErrorCode.KubeBundleInvalid),
    );
    assert.equal(m.supervisor.calls.length, calls, 'nothing restarted');
  });

  it('refuses a component the machine does not run with MOLT_NOT_CONTROL_PLANE', async () => {
    const m = machine(['kube-apiserver']);
    await assert.rejects(m.cp.apply('kube-scheduler', body()), (e: unknown) =>
      isMoltError(e, ErrorCode.NotControlPlane),
    );
    assert.deepEqual(
      (await m.cp.status()).components.map((c) => c.name),
      ['kube-apiserver'],
    );
  });

  it('starts the recorded specs at the next boot and keeps the ones already running', async () => {
    const m = machine();
    await m.cp.services.startAll();
    await m.cp.apply('kube-controller-manager', body());
    await m.cp.services.stopAll();
    await m.cp.services.startAll();
    assert.ok(m.supervisor.spec('kube-controller-manager')?.binary.includes('6666'));
    const calls = m.supervisor.calls.length;
    await m.cp.services.startAll();
    assert.equal(m.supervisor.calls.length, calls, 'running ones are kept');
    assert.deepEqual(await m.cp.services.running(), [
      'kube-apiserver',
      'kube-controller-manager',
      'kube-scheduler',
    ]);
  });

  it('gives a component started at boot as long to listen as the machine’s health timeout', async () => {
    // On a starved machine the scheduler listens only once its API server answers.
    const m = machine(undefined, (port, now) => port === 10259 && now < 80_000);
    await m.cp.services.startAll();
    assert.deepEqual(await m.cp.services.running(), [
      'kube-apiserver',
      'kube-controller-manager',
      'kube-scheduler',
    ]);
    const never = machine(undefined, (port) => port === 10259);
    await assert.rejects(never.cp.services.startAll(), (e: unknown) =>
      isMoltError(e, ErrorCode.ServiceStartFailed),
    );
    assert.ok(never.clock.now() >= 90_000, 'it waited the whole health timeout');
  });

  it('prepulls without restarting anything, once', async () => {
    const m = machine();
    await m.cp.services.startAll();
    const calls = m.supervisor.calls.length;
    const staged = await m.cp.prepull(v137);
    await m.cp.prepull(v137);
    assert.equal(staged.version, 'v1.37.0');
    assert.deepEqual(m.bundles.pulls, [v137]);
    assert.equal(m.supervisor.calls.length, calls);
    assert.deepEqual(
      (await m.cp.status()).staged.map((s) => s.bundle),
      [v137],
    );
  });
});
