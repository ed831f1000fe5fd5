// SPDX-License-Identifier: Apache-2.0
/**
 * Whether a machine's Node proves that the kubelet of the machine's current boot is Ready — the
 * new slot's Kubernetes health (docs/adr/0015 §4). A Ready condition alone is not proof: right
 * after a reboot the Node still carries the status its kubelet posted before it, and the node
 * controller keeps it Ready for its grace period (40 s by default), so a release whose kubelet
 * never starts would pass. Every kubelet reports the kernel's boot id (`status.nodeInfo.bootID`,
 * read from /proc/sys/kernel/random/boot_id) with its status, so a Node whose boot id is not the
 * machine's has not heard from this boot's kubelet yet. A Node that reports no boot id (a stand-in
 * kubelet that does not know one) is judged by its Ready condition alone. The release names its
 * kubelet (`molt.dev/kubelet-version`): a Node whose kubelet is another version does not run the
 * booted release's.
 */

/** What the Node says about itself. */
export interface NodeReport {
  /** Its Ready condition is True. */
  readonly ready: boolean;
  /** Its `molt.dev/version` label (lab kubelets set it to the booted release). */
  readonly version?: string | undefined;
  /** `status.nodeInfo.bootID`; empty or absent when the kubelet reported none. */
  readonly bootId?: string | undefined;
  /** `status.nodeInfo.kubeletVersion`, e.g. `v1.36.3`. */
  readonly kubeletVersion?: string | undefined;
}

/** What the machine knows about the boot it is in. */
export interface BootExpectation {
  readonly node: string;
  /** This boot's id (the kernel's, or the lab firmware's). */
  readonly bootId?: string | undefined;
  /** The booted release's version, which a Node that reports one must report. */
  readonly booted?: string | undefined;
  /** The booted release's kubelet (its `molt.dev/kubelet-version`), which the Node must run. */
  readonly kubelet?: string | undefined;
}

export type NodeReadyVerdict =
  { readonly ready: true } | { readonly ready: false; readonly reason: string };

/** Enough of an id to tell two apart in a message. */
const short = (id: string): string => (id.length > 8 ? `${id.slice(0, 8)}…` : id);
const bare = (version: string): string => version.replace(/^v/, '');

type Rule = (report: NodeReport, expect: BootExpectation) => string | undefined;

/** Each rule answers why the Node is not proof yet, or nothing; the first answer wins. */
const rules: readonly Rule[] = [
  ({ bootId }, { node, bootId: thisBoot }) =>
    thisBoot !== undefined && bootId !== undefined && bootId !== '' && bootId !== thisBoot
      ? `node ${node}'s kubelet has not reported since this boot ` +
        `(its Node says boot ${short(bootId)}, this is ${short(thisBoot)})`
      : undefined,
  ({ ready }, { node }) => (ready ? undefined : `node ${node} is not Ready yet`),
  ({ version }, { node, booted }) =>
    version !== undefined && booted !== undefined && version !== booted
      ? `node ${node} reports molt ${version}, but ${booted} is booted`
      : undefined,
  ({ kubeletVersion = '' }, { node, kubelet }) =>
    kubelet !== undefined && bare(kubeletVersion) !== bare(kubelet)
      ? `node ${node} runs kubelet ${kubeletVersion === '' ? '(none reported)' : kubeletVersion}, ` +
        `but the booted release carries ${kubelet}`
      : undefined,
];

export function judgeNodeReady(report: NodeReport, expect: BootExpectation): NodeReadyVerdict {
  for (const rule of rules) {
    const reason = rule(report, expect);
    if (reason !== undefined) return { ready: false, reason };
  }
  return { ready: true };
}
