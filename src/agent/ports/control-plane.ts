// SPDX-License-Identifier: Apache-2.0
/**
 * The ports of the control-plane components a machine renders and supervises (docs/adr/0012 §3):
 * who runs a component's process ({@link ComponentSupervisor}: lab processes, systemd units), who
 * asks it whether it is healthy ({@link ComponentProbe}), where Kubernetes bundles are pulled and
 * staged ({@link KubeBundles}) and where the specs that run are recorded ({@link ComponentRecords}).
 */
import type { ComponentSpec } from '../../core/kubernetes/render.ts';
import type { StagedBundle } from '../../protocol/agent-kubernetes.ts';

/** A component's process as its supervisor sees it. */
export interface ComponentState {
  readonly running: boolean;
  readonly pid?: number;
  /** ISO time the running process started. */
  readonly since?: string;
  /** The hash of the spec it was started on. */
  readonly hash?: string;
}

/** Runs components, one process each. Every call is level-triggered. */
export interface ComponentSupervisor {
  /**
   * Run `spec`: start it when stopped, restart it when it runs another spec, leave it when it runs
   * this one. Resolves once the process is started — not once it is healthy.
   */
  run(spec: ComponentSpec): Promise<void>;
  /** Stop it (stopping a stopped one succeeds). @throws `MOLT_SERVICE_STOP_FAILED` */
  stop(name: string): Promise<void>;
  state(name: string): Promise<ComponentState>;
  /** The last `lines` lines of its output (for the error that says why it did not come up). */
  logTail(name: string, lines: number): Promise<string>;
}

/** What a probe found. */
export interface ProbeResult {
  readonly ok: boolean;
  readonly message: string;
}

/** The machine asking its own components over loopback. */
export interface ComponentProbe {
  /** kube-apiserver: `/readyz`; the others: `/healthz` on their secure port. */
  healthy(name: string, port: number): Promise<ProbeResult>;
  /** Something accepts connections on the port (a component that has started serving). */
  listening(port: number): Promise<boolean>;
}

/** Kubernetes bundles on this machine: pulled by digest, verified, staged once. */
export interface KubeBundles {
  /** Where `bundle`'s binaries are (or will be once staged): `<state>/kubernetes/<digest hex>`. */
  dirFor(bundle: string): string;
  /**
   * Pull, verify and stage `bundle` unless it is staged already (then nothing is fetched).
   * @param version when given, the bundle's own version annotation must equal it
   * @throws `MOLT_KUBE_BUNDLE_INVALID`, `MOLT_DIGEST_MISMATCH`, `MOLT_SIGNATURE_*`, registry errors
   */
  stage(bundle: string, version?: string): Promise<StagedBundle>;
  staged(): Promise<StagedBundle[]>;
}

/** What runs for one component, and what it was asked from. */
export interface ComponentRecord {
  readonly spec: ComponentSpec;
  readonly version?: string;
  readonly bundle?: string;
  readonly emulatedVersion?: string;
}

/** The specs that run, by component name: `<state>/kubernetes/components.json`. */
export interface ComponentRecords {
  load(): Promise<Readonly<Record<string, ComponentRecord>>>;
  /** Replace the whole record atomically. */
  save(records: Readonly<Record<string, ComponentRecord>>): Promise<void>;
}
