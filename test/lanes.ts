// SPDX-License-Identifier: Apache-2.0
/**
 * Which lane each test file of `npm test` runs in: the one place that says what may run beside
 * what (scripts/run-tests.ts schedules them; CONTRIBUTING.md "Lanes" says how to choose). A test
 * file under test/integration or test/landing that no lane names fails the run, and so does a name
 * that matches no file: a new file is placed on purpose, never by default.
 *
 * Lanes start in the order listed (the longest first), each file as soon as its lane's limit and
 * the budget allow; the weights are measured shares of a core, so what runs at once never asks
 * for more than the two cores a CI machine has:
 * - `vm`: a real machine under QEMU (TCG) keeps a core busy for minutes: one at a time, first,
 *   and (`beforeKubernetes`) beside the Kubernetes build of a fresh machine; two at once in the
 *   run's tail, when the other lanes are done and their core is free.
 * - `image`: the operator's container image build, beside the first real machine.
 * - `hosted`: three lab machines hosting a control plane (upgraded, recovered, supervised): one at
 *   a time, with half the machine; the two that start on the previous Kubernetes version after
 *   two that do not, so its background build (scripts/test.sh) has time to end.
 * - `serial`: timing-sensitive lab stories (the crash matrices, random kill points): one at a time.
 * - `control-plane`: a real Kubernetes control plane of the file's own: at most two at once.
 * - `waits`: files that mostly wait (an operator's passes, soaks, a lab machine's reboot, a
 *   registry round trip): three side by side.
 * - `unit`: the pure core's and the adapters' unit tests, by pattern: quick, filling the gaps the
 *   others leave.
 */

export interface Lane {
  readonly name: string;
  /** How many of its files run at once. */
  readonly concurrency: number;
  /**
   * How many run at once once no file of another lane is left to start or still running: the
   * run's tail, where the cores the other lanes used would otherwise idle. Default: `concurrency`.
   */
  readonly tailConcurrency?: number;
  /**
   * What one of its files takes of {@link BUDGET} while it runs: the tenths of a core its
   * processes use on average (the runner prints each file's CPU seconds beside its time).
   */
  readonly weight: number;
  /** A file of this lane still running after this long is stopped and fails. */
  readonly timeoutMinutes: number;
  /** Files (paths from the repository root), longest first; or one pattern (`unit`). */
  readonly files: readonly string[];
  /** Files only `.ci/run` adds (`npm test -- --landing`): checked at every landing, not by hand. */
  readonly landing?: readonly string[];
  /**
   * Its files may start while `npm test` still builds the Kubernetes binaries (a fresh machine):
   * they need none, or (a later file of the lane) wait on the build script's lock themselves.
   * The other lanes start once the build is done.
   */
  readonly beforeKubernetes?: boolean;
}

/** Files run side by side while their lanes' weights add up to no more than this: two cores. */
export const BUDGET = 20;

export const lanes: readonly Lane[] = [
  {
    name: 'vm',
    concurrency: 1,
    // The three machines were the whole tail of the run, one after the other (GRUB, then the
    // real node and systemd-boot, 15 minutes each, with the other core idle): the last two run
    // side by side once nothing else is left.
    tailConcurrency: 2,
    weight: 9,
    // The GRUB machine (three cold image builds, five TCG boots) took 27–28 minutes on quiet runs
    // and ran out of 30 beside the previous Kubernetes version's build: the bound is for a hang.
    timeoutMinutes: 40,
    // The real machines need no Kubernetes and are the run's long pole: they boot beside the build.
    beforeKubernetes: true,
    // The real node last: on a fresh machine it waits for its node runtimes (the previous
    // version's kubelet for its first release), built after Kubernetes.
    files: ['test/integration/real-machine.test.ts', 'test/integration/real-node.test.ts'],
    landing: ['test/landing/real-machine-sdboot.test.ts'],
  },
  {
    // The operator's container image: mmdebstrap, npm pack and layers, beside the first real
    // machine rather than in its queue (the checkout's pack and the cache entries take turns on
    // their own locks). It needs no Kubernetes.
    name: 'image',
    concurrency: 1,
    weight: 6,
    timeoutMinutes: 15,
    beforeKubernetes: true,
    files: ['test/integration/operator-image.test.ts'],
  },
  {
    name: 'hosted',
    concurrency: 1,
    weight: 10,
    timeoutMinutes: 30,
    files: [
      'test/integration/kube/hosted-control-plane.test.ts',
      'test/integration/kube/recovery.test.ts',
      'test/integration/kube/kubernetes-upgrade.test.ts',
      'test/integration/kube/control-plane-components.test.ts',
    ],
  },
  {
    name: 'serial',
    concurrency: 1,
    weight: 4,
    timeoutMinutes: 15,
    files: [
      'test/integration/operator/chaos.test.ts',
      'test/integration/lab/crash-kills.test.ts',
      'test/integration/lab/control-plane-crash.test.ts',
      'test/integration/lab/crash-power.test.ts',
    ],
  },
  {
    name: 'control-plane',
    concurrency: 2,
    weight: 5,
    timeoutMinutes: 15,
    files: [
      'test/integration/kube/lab-cluster.test.ts',
      'test/integration/kube/declared.test.ts',
      'test/integration/kube/images-rollout.test.ts',
      'test/integration/kube/quarantine.test.ts',
      'test/integration/kube/drain.test.ts',
      'test/integration/kube/images-operator.test.ts',
      'test/integration/operator/capi-extension.test.ts',
      'test/integration/kube/workloads.test.ts',
      'test/integration/kube/leadership.test.ts',
      'test/integration/kube/images-observe.test.ts',
      'test/integration/kube/images-gm.test.ts',
      'test/integration/kube/control-plane-health.test.ts',
      'test/integration/kube/node-identity.test.ts',
      'test/integration/kube/cluster-version.test.ts',
      'test/integration/kube/node-bootstrap.test.ts',
      'test/integration/kube/cluster-bootstrap.test.ts',
      'test/integration/kube/node-bins.test.ts',
      'test/integration/kube/kubernetes-store.test.ts',
      'test/integration/kube/operator-deploy.test.ts',
    ],
  },
  {
    name: 'waits',
    concurrency: 3,
    weight: 4,
    timeoutMinutes: 15,
    files: [
      'test/integration/package.test.ts',
      'test/integration/operator/rollout.test.ts',
      'test/integration/operator/paths-drift.test.ts',
      'test/integration/operator/stage-ahead.test.ts',
      'test/integration/lab/control-plane.test.ts',
      'test/integration/lab/lab-machine.test.ts',
      'test/integration/lab/lab-commands.test.ts',
      'test/integration/lab/machine-start.test.ts',
      'test/integration/operator/dashboard.test.ts',
      'test/integration/operator/dashboard-sso.test.ts',
      'test/integration/operator/dashboard-staged.test.ts',
      'test/integration/install-bad-input.test.ts',
      'test/integration/operator/small-control-plane.test.ts',
      'test/integration/operator/replace.test.ts',
      'test/integration/lab/held-machine.test.ts',
      'test/integration/operator/notifications.test.ts',
      'test/integration/etcd-lease.test.ts',
      'test/integration/lab/refused-image.test.ts',
      'test/integration/lab/netns.test.ts',
      'test/integration/etcd-harness.test.ts',
      'test/integration/operator-etcd.test.ts',
      'test/integration/etcd-member.test.ts',
      'test/integration/operator-registration.test.ts',
      'test/integration/operator-api.test.ts',
      'test/integration/cli-contexts.test.ts',
      'test/integration/cli-releases.test.ts',
      'test/integration/install.test.ts',
      'test/integration/image-pull.test.ts',
      'test/integration/image-pull-bad-input.test.ts',
      'test/integration/etcd-service.test.ts',
      'test/integration/fleetlock-etcd.test.ts',
      'test/integration/image-pull-hostile.test.ts',
      'test/integration/image-pull-mirror.test.ts',
      'test/integration/image-units.test.ts',
      'test/integration/install-block-device.test.ts',
      'test/integration/block-slot-pull.test.ts',
      'test/integration/bootctl.test.ts',
      'test/integration/cli-pipe.test.ts',
      'test/integration/demo-flags.test.ts',
      'test/integration/docs-index.test.ts',
      'test/integration/discovery-registry.test.ts',
      'test/integration/discovery-signatures.test.ts',
      'test/integration/etcd-unit-env.test.ts',
      'test/integration/kube/removed-flags.test.ts',
      'test/integration/grubenv-tools.test.ts',
      'test/integration/oci-faults.test.ts',
      'test/integration/oci-paging.test.ts',
      'test/integration/partition-mounts.test.ts',
      'test/integration/publish-dir.test.ts',
      'test/integration/real-adapters-upgrade.test.ts',
      'test/integration/registry-auth-basic.test.ts',
      'test/integration/registry-auth-token.test.ts',
      'test/integration/registry-conformance.test.ts',
      'test/integration/registry-skopeo.test.ts',
      'test/integration/signatures-registry.test.ts',
      'test/integration/lab/container-images.test.ts',
      'test/integration/containerd-pins.test.ts',
      'test/integration/vm-quiet-console.test.ts',
    ],
  },
  { name: 'unit', concurrency: 2, weight: 4, timeoutMinutes: 5, files: ['src/**/*.test.ts'] },
];
