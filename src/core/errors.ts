// SPDX-License-Identifier: Apache-2.0
/**
 * The stable error codes users and scripts can rely on. A code never changes meaning once
 * released; add new ones instead. Grouped by area; the CLI maps each to an exit code and a hint.
 */
import { inputCodes } from './error-codes-input.ts';
import { kubeCodes } from './error-codes-kube.ts';
import { withoutUserInfo } from './redact.ts';

export const ErrorCode = {
  ...inputCodes,
  ...kubeCodes,
  // node agent (docs/adr/0004)
  /** The agent is already running an operation; the answer names it. */
  AgentBusy: 'MOLT_AGENT_BUSY',
  /** The machine is held (a person's hold, kept by its agent): no upgrade until it ends or is released. */
  MachineHeld: 'MOLT_MACHINE_HELD',
  /** An installer image that breaks the contract: missing kernel or rootfs, unknown artifact, bad labels. */
  ImageInvalid: 'MOLT_IMAGE_INVALID',
  /** An installer image larger than the agent accepts (from descriptors, or while streaming). */
  ImageTooLarge: 'MOLT_IMAGE_TOO_LARGE',
  /** What the agent must write does not fit in the filesystem it goes to (a bundle on STATE). */
  NoSpace: 'MOLT_NO_SPACE',
  /** A tar layer entry that would escape the slot: `..`, absolute or nested names, links, devices. */
  LayerUnsafePath: 'MOLT_LAYER_UNSAFE_PATH',
  /** A written slot whose bytes do not hash to the image's digests on read-back. */
  SlotVerifyFailed: 'MOLT_SLOT_VERIFY_FAILED',
  /** No slot holds a valid image to switch to (manual rollback, exhausted rollbacks). */
  NoValidSlot: 'MOLT_NO_VALID_SLOT',
  /** Bootloader files molt cannot read or would not write (bad grubenv block, unknown entries). */
  BootloaderInvalid: 'MOLT_BOOTLOADER_INVALID',
  /** Another control-plane machine holds the cluster upgrade lease. */
  LeaseHeld: 'MOLT_LEASE_HELD',
  /** Taking this member down would lose (or risk) etcd quorum. */
  QuorumAtRisk: 'MOLT_QUORUM_AT_RISK',
  /** An etcd member is unhealthy, unreachable or not started. */
  EtcdUnhealthy: 'MOLT_ETCD_UNHEALTHY',
  /** A service the upgrade must stop did not stop. */
  ServiceStopFailed: 'MOLT_SERVICE_STOP_FAILED',
  /** A machine service (a lab machine's kube-apiserver) did not start or listen in time. */
  ServiceStartFailed: 'MOLT_SERVICE_START_FAILED',
  /** `molt lab up` where a lab already runs. */
  LabRunning: 'MOLT_LAB_RUNNING',
  /** `molt lab status|down|env|publish` where no lab runs. */
  LabNotRunning: 'MOLT_LAB_NOT_RUNNING',
  /** The lab did not come up (its log says why). */
  LabFailed: 'MOLT_LAB_FAILED',
  /** `molt lab publish VERSION` where the lab already has a release VERSION. */
  LabReleaseExists: 'MOLT_LAB_RELEASE_EXISTS',
  /** A VM (src/lab/vm) did not start, did not answer on its monitor, or its console never showed what was awaited. */
  VmFailed: 'MOLT_VM_FAILED',
  /** An EPHEMERAL mount is busy and cannot be released. */
  MountBusy: 'MOLT_MOUNT_BUSY',
  /** EPHEMERAL could not be mounted or formatted (no fstab entry, no such partition, mkfs failed). */
  MountFailed: 'MOLT_MOUNT_FAILED',
  /** The caller's identity may not perform this operation. */
  Forbidden: 'MOLT_FORBIDDEN',
  /** The TLS handshake failed or would: an expired, foreign or missing certificate, or a CA of another fleet. */
  TlsRejected: 'MOLT_TLS_REJECTED',
  /**
   * A listener refused a connection or an event stream at a cap: the peer (one certificate, or one
   * address without one) holds its most, or the listener is full; retryable once some close.
   */
  ConnectionLimit: 'MOLT_CONNECTION_LIMIT',
  /** The machine did not become healthy on the new slot before its deadline. */
  HealthDeadline: 'MOLT_HEALTH_DEADLINE',
  /** The new slot did not boot; the bootloader fell back to the previous one. */
  BootFailed: 'MOLT_BOOT_FAILED',
  /**
   * The new slot did not boot because its root failed dm-verity (its bytes are not the release's
   * as built); the bootloader fell back to the previous one.
   */
  VerityFailed: 'MOLT_VERITY_FAILED',
  /** The agent is unreachable at its endpoint. */
  AgentUnreachable: 'MOLT_AGENT_UNREACHABLE',
  /** A step did not finish in time and its outcome is unknown (etcd writes without quorum). */
  TimedOut: 'MOLT_TIMED_OUT',
  /** Certificate or key files (`molt pki`) that are missing, unreadable or not what they claim. */
  PkiInvalid: 'MOLT_PKI_INVALID',
  /** The machine's root directory or config is missing or malformed. */
  MachineInvalid: 'MOLT_MACHINE_INVALID',
  /** A file holding a secret (a password, a private key) is readable by group or others. */
  SecretExposed: 'MOLT_SECRET_EXPOSED',
  /** An operation id the agent's journal does not know (`molt node events --operation`). */
  OperationNotFound: 'MOLT_OPERATION_NOT_FOUND',
  /** The machine rebooted (power cut, crash) in the middle of an operation, before its new slot was committed. */
  Interrupted: 'MOLT_INTERRUPTED',
  /** The operation was cancelled on request (`molt node cancel`) before it changed the machine. */
  Cancelled: 'MOLT_CANCELLED',
  /** A cancel the agent refuses: no operation runs, or it is past the point of no return. */
  NotCancellable: 'MOLT_NOT_CANCELLABLE',
  /** A request to apply a staged upgrade that is not (or no longer) what the machine has staged. */
  NotStaged: 'MOLT_NOT_STAGED',
  /** The image pull did not finish within the machine's pull deadline (`pullTimeoutSeconds`). */
  PullDeadline: 'MOLT_PULL_DEADLINE',
  /** An agent answered with something that is not molt's agent protocol (wrong endpoint, version skew). */
  AgentProtocol: 'MOLT_AGENT_PROTOCOL',
  /**
   * The agent reached at a machine's endpoint presents the certificate of another machine (or of
   * no node at all): the operator never acts on it (invariant 8). Not retryable: the endpoint or
   * the registration is wrong.
   */
  AgentIdentity: 'MOLT_AGENT_IDENTITY',
  // installer (docs/install.md, docs/real-machines.md §1)
  /** The disk cannot hold molt's layout (ESP, two slots, STATE, EPHEMERAL) at the sizes asked for. */
  DiskTooSmall: 'MOLT_DISK_TOO_SMALL',
  /** The disk holds a partition table or filesystem that is not molt's; `--wipe` replaces it. */
  DiskNotMolt: 'MOLT_DISK_NOT_MOLT',
  /**
   * The disk has molt's layout and its STATE holds a machine (its config, keys, journal): another
   * machine's disk, or this one's; `--overwrite-machine` replaces it (`--wipe` does not).
   */
  DiskHoldsMachine: 'MOLT_DISK_HOLDS_MACHINE',
  /** The disk, or one of its partitions, is mounted, used as swap, held (dm, md) or backs a loop device. */
  DiskInUse: 'MOLT_DISK_IN_USE',
  /** A program molt runs (sfdisk, mkfs.vfat, mtools, mke2fs, grub-mkimage) or a file it installs (the systemd-boot EFI binary) is missing. */
  ToolMissing: 'MOLT_TOOL_MISSING',
  // recovery with Kubernetes down, through the agents (docs/adr/0012 §6)
  /** A service name the machine does not run (`molt node service list` shows the names). */
  ServiceNotFound: 'MOLT_SERVICE_NOT_FOUND',
  /** An etcd member id the cluster does not list (`molt node etcd members` shows the ids). */
  EtcdMemberNotFound: 'MOLT_ETCD_MEMBER_NOT_FOUND',
  /** A file that is not an etcd snapshot (no bbolt header, or `etcdutl snapshot status` refuses it). */
  EtcdSnapshotInvalid: 'MOLT_ETCD_SNAPSHOT_INVALID',
  /** A snapshot upload larger than the agent accepts (`MaxSnapshotBytes`). */
  EtcdSnapshotTooLarge: 'MOLT_ETCD_SNAPSHOT_TOO_LARGE',
  // operator (docs/adr/0005)
  /** A rollout policy that cannot be enforced: bad cron or zone, percent over 100, empty window, contradictions. */
  PolicyInvalid: 'MOLT_POLICY_INVALID',
  /** A fleet file or snapshot that is not well formed (unknown fields, wrong types, duplicate ids). */
  FleetInvalid: 'MOLT_FLEET_INVALID',
  /** A pool name no machine or policy knows. */
  UnknownPool: 'MOLT_UNKNOWN_POOL',
  /** A machine id the fleet does not have. */
  UnknownMachine: 'MOLT_UNKNOWN_MACHINE',
  /** A rollout id that is already taken. */
  RolloutExists: 'MOLT_ROLLOUT_EXISTS',
  /** A rollout id the operator does not know. */
  RolloutNotFound: 'MOLT_ROLLOUT_NOT_FOUND',
  /** A release (digest or version) the registry does not list and the operator never saw. */
  UnknownRelease: 'MOLT_UNKNOWN_RELEASE',
  /** An unblock of a release that is not blocked (for that pool). */
  NotBlocked: 'MOLT_NOT_BLOCKED',
  /** An upgrade to the image the machine already boots: it would give up the fallback (force it). */
  AlreadyRunning: 'MOLT_ALREADY_RUNNING',
  /** A machine that already has progress in the rollout: it is never started twice. */
  AlreadyStarted: 'MOLT_ALREADY_STARTED',
  /** Another operator leads; only the leader acts (ask it, or wait for its claim to expire). */
  NotLeader: 'MOLT_NOT_LEADER',
  ResignFailed: 'MOLT_RESIGN_FAILED', // the others wait for the claim to expire
  /** A value in the operator's store that molt did not write or cannot read (named by its key). */
  StoreCorrupt: 'MOLT_STORE_CORRUPT',
  /** The operator's store cannot be used at all (its CRD not installed, its namespace missing). */
  StoreUnavailable: 'MOLT_STORE_UNAVAILABLE',
  /** No dashboard session (none, expired, or signed out), or a token no dashboard user has. */
  Unauthenticated: 'MOLT_UNAUTHENTICATED',
  /** Too many attempts in a short time (dashboard sign-ins); retry after the time the answer names. */
  RateLimited: 'MOLT_RATE_LIMITED',
  /** The dashboard's OpenID Connect provider cannot be reached, or answered what it must not. */
  SsoUnavailable: 'MOLT_SSO_UNAVAILABLE',
  /** A rollout in a state that does not allow the request (resume a completed rollout, …). */
  RolloutState: 'MOLT_ROLLOUT_STATE',
  /** The operator API cannot be reached (down, restarting, wrong --endpoint); retryable. */
  OperatorUnreachable: 'MOLT_OPERATOR_UNREACHABLE',
  /** An answer that is not the operator protocol (another server, another molt version). */
  OperatorProtocol: 'MOLT_OPERATOR_PROTOCOL',
  /** A machine provider (replace strategy) cannot be reached, timed out or answered 5xx; retryable. */
  ProviderUnreachable: 'MOLT_PROVIDER_UNREACHABLE',
  /** A machine provider refused a request (4xx) or answered something that is not its protocol. */
  ProviderFailed: 'MOLT_PROVIDER_FAILED',
  /** A webhook sink (docs/adr/0009) unreachable, too slow, or answering 5xx or 429; retried. */
  WebhookUnreachable: 'MOLT_WEBHOOK_UNREACHABLE',
  /** A webhook sink refused a delivery (4xx, a redirect): not retried, the event is dropped. */
  WebhookRefused: 'MOLT_WEBHOOK_REFUSED',
  // Cluster API (docs/adr/0014)
  /** A write to a CAPI Machine (its MoltInPlaceUpdate condition, a remediation) failed; retried at CAPI's next call. */
  CapiWriteFailed: 'MOLT_CAPI_WRITE_FAILED',
  /** Reading a CAPI Machine a hook names failed (or answered something else); CAPI asks again. */
  CapiReadFailed: 'MOLT_CAPI_READ_FAILED',
  /** The extension listener would accept unauthenticated callers: no `capi.clientCa`, and not told `insecureNoClientAuth`. */
  CapiClientAuthRequired: 'MOLT_CAPI_CLIENT_AUTH_REQUIRED',
  // OS images (docs/image.md)
  /** `molt image build` could not finish a step (a tool failed or is missing, not root, no space). */
  ImageBuildFailed: 'MOLT_IMAGE_BUILD_FAILED',
  // container images followed by digest (docs/adr/0013)
  /** Two image policies select the same container: each container follows one policy. */
  ImagePolicyConflict: 'MOLT_IMAGE_POLICY_CONFLICT',
  /** An image policy names workloads without a namespace it may look in (its own, or written out). */
  ImagePolicyNamespaces: 'MOLT_IMAGE_POLICY_NAMESPACES',
  /** A workload's image changed under molt (someone else edited it): its image rollout pauses. */
  WorkloadEdited: 'MOLT_WORKLOAD_EDITED',
  /** A Deployment, DaemonSet or StatefulSet molt follows is gone. */
  WorkloadNotFound: 'MOLT_WORKLOAD_NOT_FOUND',
  /** A workload did not become available on its new image within the policy's progress timeout. */
  WorkloadUnavailable: 'MOLT_WORKLOAD_UNAVAILABLE',
  /** An image digest molt follows or keeps (a GM pin) is not in the registry any more. */
  ImageMissing: 'MOLT_IMAGE_MISSING',
  // the CLI's own configuration (docs/adr/0010)
  /** A client command that found no daemon to talk to: no flag, no environment, no context. */
  NoEndpoint: 'MOLT_NO_ENDPOINT',
  /** A context (`--context`, `molt config use-context`) the CLI config file does not have. */
  UnknownContext: 'MOLT_UNKNOWN_CONTEXT',
  /** The CLI config file (`~/.config/molt/config.yaml`) is not YAML or not molt's shape. */
  CliConfigInvalid: 'MOLT_CLI_CONFIG_INVALID',
  /** A rollout id prefix that more than one rollout starts with. */
  AmbiguousId: 'MOLT_AMBIGUOUS_ID',
  // anything not classified: a bug in molt, reported with a stack trace
  Internal: 'MOLT_INTERNAL',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** Details a caller can attach to a {@link MoltError}. */
export interface MoltErrorOptions {
  /** What the user can do next, shown under the message. */
  readonly hint?: string;
  readonly cause?: unknown;
  /** Whether retrying the same call may succeed (transport faults, 429, 5xx). */
  readonly retryable?: boolean;
  /** Machine-readable facts for API answers (e.g. the running operation for `MOLT_AGENT_BUSY`). */
  readonly details?: Readonly<Record<string, unknown>>;
}

/** Marks a {@link MoltError} across copies of this module (a global symbol: one per process). */
const moltErrorBrand = Symbol.for('dev.molt.MoltError');

/**
 * The one error type molt raises for expected failures: a stable {@link ErrorCode}, a message
 * written for a person, and an optional hint. Anything else that reaches the CLI is a bug. Its
 * message and hint never carry a URL's user-info (`redact.ts`): they reach logs, history and the
 * dashboard.
 */
export class MoltError extends Error {
  /**
   * `instanceof MoltError` holds for a MoltError made by another copy of this module: the bundled
   * CLI carries its own copy, and it describes the errors of the processes it starts (tsc's
   * modules). A subclass keeps the ordinary prototype check.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (this !== MoltError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return typeof value === 'object' && value !== null && moltErrorBrand in value;
  }

  readonly [moltErrorBrand] = true;
  readonly code: ErrorCode;
  readonly hint: string | undefined;
  readonly retryable: boolean;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(code: ErrorCode, message: string, options: MoltErrorOptions = {}) {
    super(
      withoutUserInfo(message),
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = 'MoltError';
    this.code = code;
    this.hint = options.hint === undefined ? undefined : withoutUserInfo(options.hint);
    this.retryable = options.retryable ?? false;
    this.details = options.details;
  }
}

/** True when `e` is a {@link MoltError}, optionally with the given code. */
export function isMoltError(e: unknown, code?: ErrorCode): e is MoltError {
  return e instanceof MoltError && (code === undefined || e.code === code);
}

/** One line for a log or a status: `MOLT_X: message` for a molt error, the message otherwise. */
export function errorLine(e: unknown): string {
  return isMoltError(e) ? `${e.code}: ${e.message}` : errorMessage(e);
}

/** What went wrong, without a code: an Error's message, or anything else thrown as a string. */
export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
