// SPDX-License-Identifier: Apache-2.0
// The kubelet skew check on fakes: a release whose kubelet the cluster's API server does not
// support is refused with MOLT_KUBELET_SKEW before anything is written or disrupted; one within
// the policy goes on to the reboot. The runner is the real one; the machine's ports are fakes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, isMoltError, MoltError } from '../../core/errors.ts';
import { labSlotHealth } from '../adapters/lab/slot-health.ts';
import { createNoClusterKubeNode } from '../adapters/no-cluster/index.ts';
import { createFakeBootloader } from '../ports/bootloader.fake.ts';
import { createFakeClock } from '../ports/clock.fake.ts';
import { createFakeImageSource, type FakeImage } from '../ports/image-source.fake.ts';
import { createMemoryJournalStore } from '../ports/journal-store.fake.ts';
import type { KubeNode } from '../ports/kube-node.ts';
import { createRecordingKubeNode } from '../ports/kube-node.fake.ts';
import { createFakeMounts } from '../ports/mounts.fake.ts';
import { createFakePower } from '../ports/power.fake.ts';
import { createFakeServices } from '../ports/services.fake.ts';
import { FakeSlotStore } from '../ports/slot-store.fake.ts';
import { checkReleaseKubelet } from './kubelet-skew.ts';
import { createRunner } from './runner.ts';

const release = (version: string, kubelet?: string): FakeImage => ({
  imageDigest: `sha256:${version.replace(/\D/g, '').padEnd(64, '0')}`,
  version,
  artifacts: {
    vmlinuz: new TextEncoder().encode(`kernel ${version}`),
    'rootfs.img': new TextEncoder().encode(`root ${version}`),
  },
  ...(kubelet !== undefined && { labels: { 'molt.dev/kubelet-version': kubelet } }),
});

/** A worker booted in A (1.0), committed, with releases 1.1 (kubelet v1.36.0) and 1.2 (v1.35.4). */
async function worker(kube: KubeNode) {
  const clock = createFakeClock();
  const slots = new FakeSlotStore(() => new Date(clock.now()));
  const bootloader = createFakeBootloader();
  const images = createFakeImageSource(slots, {
    'reg/molt:1.1': release('1.1', 'v1.36.0'),
    'reg/molt:1.2': release('1.2', 'v1.35.4'),
  });
  slots.stage('A', { ...release('1.0'), imageRef: 'reg/molt:1.0' });
  await slots.install('A', 'install');
  await slots.markReady('A', 'install');
  await bootloader.writeEntry('A', (await slots.manifest('A'))!);
  await bootloader.commit('A');
  const journal = createMemoryJournalStore();
  const services = createFakeServices([]);
  const power = createFakePower();
  const runner = createRunner({
    journal,
    ports: {
      ...{ bootloader, slots, images, services, kube, power, clock },
      mounts: createFakeMounts(),
      health: [labSlotHealth(slots, 'A')],
    },
    boot: { bootId: 'boot-1', slot: 'A' },
    faults: { at: () => Promise.resolve() },
    holds: { check: () => undefined },
    controlPlane: false,
    healthDeadlineMs: 30_000,
    newOperationId: () => 'op-1',
    onFatal: (error) => {
      throw error;
    },
    tickMs: 5,
  });
  await runner.start();
  return { clock, slots, bootloader, journal, services, power, runner };
}

/** Advance the fake clock until the operation ended or the machine asked for a reboot. */
async function untilDoneOrReboot(m: Awaited<ReturnType<typeof worker>>): Promise<void> {
  for (let i = 0; i < 2000 && m.power.reboots.length === 0; i += 1) {
    if (m.runner.state().last?.operationId === 'op-1') return;
    await new Promise((resolve) => setTimeout(resolve, 1));
    m.clock.advance(1000);
  }
}

describe('the kubelet skew check before an upgrade', () => {
  it('refuses a release whose kubelet is newer than the API server, the machine untouched', async () => {
    const kube = createRecordingKubeNode({ version: 'v1.35.4' });
    const m = await worker(kube);
    const before = [...m.bootloader.calls];
    await m.runner.submit({ kind: 'upgrade', image: 'reg/molt:1.1' });
    await untilDoneOrReboot(m);
    const last = m.runner.state().last;
    assert.equal(last?.result, 'Failed');
    assert.equal(last.code, 'MOLT_KUBELET_SKEW');
    assert.match(
      last.reason ?? '',
      /kubelet v1\.36\.0 is newer than the API server v1\.35\.4: the version skew policy allows kubelets 1\.32 to 1\.35/,
    );
    assert.deepEqual(kube.calls, ['version'], 'asked the version; never cordoned nor drained');
    assert.equal(await m.slots.manifest('B'), undefined, 'slot B untouched');
    assert.equal(await m.slots.staged('B'), undefined, 'nothing staged');
    assert.deepEqual(m.bootloader.calls, before, 'no boot entry written or removed');
    assert.ok(!m.services.calls.includes('stopAll'), 'no service stopped');
    assert.equal(m.power.reboots.length, 0);
    const record = await m.journal.load();
    assert.equal(record?.state.phase, 'Idle', 'the journal holds no operation in flight');
    // Its last commands clean up after the pull (a staging area, none here), nothing else.
    assert.deepEqual(
      record.commands.map((c) => c.type),
      ['DiscardPull'],
    );
    const steps = (await m.journal.events('op-1')).map((e) => e.message).join('\n');
    assert.match(steps, /PullImage failed: release 1\.1: kubelet v1\.36\.0 is newer/);
    assert.doesNotMatch(steps, /Cordon|Drain|StopServices|WriteSlot/);
    m.runner.close();
  });

  it('lets a release within the policy go on to the reboot', async () => {
    const kube = createRecordingKubeNode({ version: 'v1.35.9' });
    const m = await worker(kube);
    await m.runner.submit({ kind: 'upgrade', image: 'reg/molt:1.2' });
    await untilDoneOrReboot(m);
    assert.equal(m.power.reboots.length, 1, JSON.stringify(m.runner.state().last));
    assert.deepEqual(kube.calls, ['version', 'cordon', 'drain']);
    assert.equal((await m.slots.manifest('B'))?.version, '1.2');
    assert.equal(m.bootloader.oneShot, 'B');
    m.runner.close();
  });

  it('judges an API server that emulates the previous minor by that minor', async () => {
    const refused = checkReleaseKubelet(
      createRecordingKubeNode({ version: 'v1.36.3', emulatedVersion: '1.35' }),
      { digest: 'sha256:1', version: '1.1', labels: { 'molt.dev/kubelet-version': 'v1.36.3' } },
    );
    await assert.rejects(refused, (e: unknown) => {
      assert.ok(isMoltError(e, ErrorCode.KubeletSkew));
      assert.equal(
        e.message,
        'release 1.1: kubelet v1.36.3 is newer than the API server v1.36.3 (emulating 1.35): the version skew policy allows kubelets 1.32 to 1.35',
      );
      assert.equal(
        e.hint,
        'upgrade the control plane first (molt cluster kubernetes upgrade), then this release',
      );
      assert.deepEqual(e.details, { kubelet: 'v1.36.3', apiServer: 'v1.36.3' });
      return true;
    });
  });

  it('checks nothing outside a cluster or for a release without a kubelet', async () => {
    const labelled = {
      digest: 'sha256:1',
      version: '1.1',
      labels: { 'molt.dev/kubelet-version': 'v9.0.0' },
    };
    await checkReleaseKubelet(createNoClusterKubeNode(), labelled);
    const kube = createRecordingKubeNode({ version: 'v1.35.4' });
    await checkReleaseKubelet(kube, { ...labelled, labels: {} });
    assert.deepEqual(kube.calls, [], 'the API server was not asked');
  });

  it('refuses a kubelet label that is no version as an invalid image, and passes on an unreachable API server', async () => {
    const image = {
      digest: 'sha256:1',
      version: '1.1',
      labels: { 'molt.dev/kubelet-version': 'latest' },
    };
    await assert.rejects(
      checkReleaseKubelet(createRecordingKubeNode({ version: 'v1.35.4' }), image),
      (e: unknown) =>
        isMoltError(e, ErrorCode.ImageInvalid) &&
        /"latest" is not a Kubernetes version/.test(e.message),
    );
    const away = new MoltError(ErrorCode.KubeUnavailable, 'could not read the API server version');
    await assert.rejects(
      checkReleaseKubelet(createRecordingKubeNode(away), {
        ...image,
        labels: { 'molt.dev/kubelet-version': 'v1.35.4' },
      }),
      (e: unknown) => e === away,
    );
  });
});
