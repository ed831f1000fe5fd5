// SPDX-License-Identifier: Apache-2.0
/**
 * Leader election between operators (docs/adr/0005 §4): only the leader plans and acts. The
 * leader holds a TTL'd claim it renews; an operator that dies lets it expire, and another takes
 * over. Implementations: in memory (`adapters/memory-leadership`), etcd
 * (`adapters/etcd-leadership`) and a Kubernetes Lease (`adapters/kube-leadership`), all passing
 * `testkit/leadership-conformance.ts`.
 */
export interface Leadership {
  /** This operator's identity (written into the claim). */
  readonly id: string;
  /**
   * Resolves once this operator leads — `isLeader()` true — (at once if it already does); rejects
   * when closed. A claim held but not renewed in time is no lead: the call waits until the claim
   * is renewed or lost, never resolving while `isLeader()` is false (a caller that campaigns again
   * whenever it stops leading would otherwise spin without yielding).
   */
  campaign(): Promise<void>;
  isLeader(): boolean;
  /** The current leader's id, if any. */
  leader(): Promise<string | undefined>;
  /**
   * Called when leadership is lost (the claim expired or was taken, or could not be renewed for so
   * long that it may have expired): stop acting at once. Not called for `resign()` or `close()`.
   * `isLeader()` turns false no later than the claim could expire, even before this fires.
   */
  onLost(listener: () => void): void;
  /** Give leadership up at once (so another operator need not wait for the TTL). */
  resign(): Promise<void>;
  /**
   * Stop campaigning (a pending `campaign()` rejects with `MOLT_NOT_LEADER`) and renewing, *without*
   * resigning: the claim expires at its TTL, as after a crash. Call `resign()` first for a prompt
   * handover.
   */
  close(): Promise<void>;
}
