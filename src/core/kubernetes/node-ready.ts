// SPDX-License-Identifier: Apache-2.0
/**
 * Whether a machine's Node proves that the kubelet of the machine's current boot is Ready — the
 * new slot's Kubernetes health (docs/adr/0015 §4). A Ready condition alone is not proof: right
 * after a reboot the Node still carries the status its kubelet posted before it, and the node
 * controller keeps it Ready for its grace period (40 s by default), so a release whose kubelet
 * never starts would pass. Every kubelet reports the kernel's boot id (`status.nodeInfo.bootID`,
 * read from /proc/sys/kernel/random/boot_id) with its status, so a Node whose boot id is not the
 * machine's has not heard from this boot's kubelet yet. A Node that reports no boot id (a stand-in
 * kubelet that does not know one) is judged by its Ready condition alone.
 */

/** What the Node says about itself. */
export interface NodeReport {
  /** Its Ready condition is True. */
  readonly ready: boolean;
  /** Its `molt.dev/version` label (lab kubelets set it to the booted release). */
  readonly version?: string | undefined;
  /** `status.nodeInfo.bootID`; empty or absent when the kubelet reported none. */
  readonly bootId?: string | undefined;
}

/** What the machine knows about the boot it is in. */
export interface BootExpectation {
  readonly node: string;
  /** This boot's id (the kernel's, or the lab firmware's). */
  readonly bootId?: string | undefined;
  /** The booted release's version, which a Node that reports one must report. */
  readonly booted?: string | undefined;
}

export type NodeReadyVerdict =
  { readonly ready: true } | { readonly ready: false; readonly reason: string };

/** Enough of an id to tell two apart in a message. */
const short = (id: string): string => (id.length > 8 ? `${id.slice(0, 8)}…` : id);

export function judgeNodeReady(report: NodeReport, expect: BootExpectation): NodeReadyVerdict {
  const { node } = expect;
  const reported = report.bootId ?? '';
  if (expect.bootId !== undefined && reported !== '' && reported !== expect.bootId)
    return {
      ready: false,
      reason:
        `node ${node}'s kubelet has not reported since this boot ` +
        `(its Node says boot ${short(reported)}, this is ${short(expect.bootId)})`,
    };
  if (!report.ready) return { ready: false, reason: `node ${node} is not Ready yet` };
  if (
    report.version !== undefined &&
    expect.booted !== undefined &&
    report.version !== expect.booted
  )
    return {
      ready: false,
      reason: `node ${node} reports molt ${report.version}, but ${expect.booted} is booted`,
    };
  return { ready: true };
}
