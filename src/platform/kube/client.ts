// SPDX-License-Identifier: Apache-2.0
/**
 * molt's access to a Kubernetes API through the official client (`@kubernetes/client-node`, the
 * dependency shortlist's choice): loading a kubeconfig with clear errors, and mapping the API's
 * failures to molt's stable codes — 403 is `MOLT_KUBE_FORBIDDEN` naming the verb and resource the
 * role lacks, a connection failure or 5xx is a retryable `MOLT_KUBE_UNAVAILABLE`.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentOptions } from 'node:https';
import {
  ApiException,
  type Cluster,
  KubeConfig,
  type RequestContext,
  VersionApi,
} from '@kubernetes/client-node';
import type { Dispatcher } from 'undici';
import { ErrorCode, errorMessage, MoltError } from '../../core/errors.ts';

/**
 * How long one API call may take, answer body included. The client sets no limit of its own, so a
 * server that accepts the connection and never answers (an API server paused under load, a dead
 * peer behind a live proxy) would hold a drain, a store write or a Lease renewal forever.
 */
export const KUBE_REQUEST_TIMEOUT_MS = 30_000;

/**
 * Bound every call made through `kc.makeApiClient` by `ms`: the generated clients ask the
 * kubeconfig to authenticate each request, which is the one hook that sees every request context,
 * so the deadline is set there. A call that runs out fails as a transport error (no HTTP status):
 * {@link kubeError} makes it a retryable `MOLT_KUBE_UNAVAILABLE`, and a write whose answer is lost
 * this way is re-read before anything is decided. Watches go through their own fetch and are not
 * bounded here (none is used).
 */
export function boundRequests(kc: KubeConfig, ms = KUBE_REQUEST_TIMEOUT_MS): KubeConfig {
  reuseConnections(kc);
  const authenticate = kc.applySecurityAuthentication.bind(kc);
  kc.applySecurityAuthentication = async (context: RequestContext): Promise<void> => {
    await authenticate(context);
    if (context.getSignal() === undefined) context.setSignal(AbortSignal.timeout(ms));
  };
  return kc;
}

/** The kubeconfig's private factory of each request's undici dispatcher (client-node 2.x). */
interface DispatcherFactory {
  createDispatcher?: (cluster: Cluster | null, options: AgentOptions) => Dispatcher | undefined;
}

/** TLS material (PEM text, DER or PFX bytes, a list of either) or a flag, as text to hash. */
function tlsText(part: unknown): string {
  if (Array.isArray(part)) return part.map(tlsText).join('\n');
  if (Buffer.isBuffer(part)) return part.toString('base64');
  return typeof part === 'string' || typeof part === 'boolean' ? String(part) : '';
}

/** How many dispatchers one kubeconfig keeps: one per server and credentials in use. */
const KEPT_DISPATCHERS = 4;

/**
 * Let the kubeconfig's requests share connections. client-node 2.0 builds a new undici Agent for
 * every request, so every call — each Lease read of a standby, each store write — paid a TLS
 * handshake and left its socket open until the server timed it out: a Lease read cost 7.6 ms of
 * CPU on a server core and a standby held a dozen sockets; kept, 4.2 ms and one socket. Here the
 * dispatcher is kept per server and TLS material (a rotated client certificate gets a fresh one;
 * a token is a header, not in it), and the oldest is closed past {@link KEPT_DISPATCHERS}. A
 * client without the hook keeps its own behaviour.
 */
function reuseConnections(kc: KubeConfig): void {
  const own = kc as unknown as DispatcherFactory;
  const create = own.createDispatcher?.bind(kc);
  if (create === undefined) return;
  const kept = new Map<string, Dispatcher | undefined>();
  own.createDispatcher = (cluster, options) => {
    const hash = createHash('sha256');
    for (const part of [
      cluster?.server,
      cluster?.proxyUrl,
      options.ca,
      options.cert,
      options.key,
      options.pfx,
      options.passphrase,
      options.servername,
      options.rejectUnauthorized,
    ])
      hash.update(`${tlsText(part)}\0`);
    const key = hash.digest('hex');
    if (kept.has(key)) return kept.get(key);
    const made = create(cluster, options);
    kept.set(key, made);
    for (const [old, d] of kept) {
      if (kept.size <= KEPT_DISPATCHERS) break;
      kept.delete(old);
      void d?.close().catch(() => undefined);
    }
    return made;
  };
}

/** Load `path` (a kubeconfig file); its current context must name a cluster and a user. */
export async function loadKubeConfig(path: string): Promise<KubeConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new MoltError(ErrorCode.KubeConfigInvalid, `cannot read the kubeconfig ${path}`, {
      cause: e,
      hint: 'point kubernetes.kubeconfig at a readable kubeconfig file',
    });
  }
  const kc = new KubeConfig();
  try {
    kc.loadFromString(text);
  } catch (e) {
    throw new MoltError(
      ErrorCode.KubeConfigInvalid,
      `${path} is not a kubeconfig: ${errorMessage(e)}`,
      { cause: e },
    );
  }
  if (kc.getCurrentCluster() === null || kc.getCurrentUser() === null)
    throw new MoltError(
      ErrorCode.KubeConfigInvalid,
      `${path}: its current context names no cluster or no user`,
      { hint: 'set current-context to a context with a cluster and a user' },
    );
  return boundRequests(kc);
}

/** Where a pod's service account credentials are mounted (the kubelet puts them there). */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/**
 * The pod's own identity, for a process running in the cluster it talks to: the API server at
 * `KUBERNETES_SERVICE_HOST`/`_PORT`, the service account's token and the cluster CA under
 * {@link SERVICE_ACCOUNT_DIR} (the client re-reads the token file as the kubelet rotates it), and
 * the pod's namespace. `root` prefixes the paths (tests).
 */
export async function loadInClusterKubeConfig(
  root = '',
): Promise<{ readonly kc: KubeConfig; readonly namespace: string | undefined }> {
  const host = process.env['KUBERNETES_SERVICE_HOST'];
  const port = process.env['KUBERNETES_SERVICE_PORT'];
  const hint =
    'name a kubeconfig, or run the operator in a pod with a service account (deploy/kubernetes)';
  if (host === undefined || host === '' || port === undefined || port === '')
    throw new MoltError(
      ErrorCode.KubeConfigInvalid,
      'no kubeconfig given and not running in a pod: KUBERNETES_SERVICE_HOST/_PORT are not set',
      { hint },
    );
  const dir = `${root}${SERVICE_ACCOUNT_DIR}`;
  for (const file of ['token', 'ca.crt'])
    try {
      await readFile(join(dir, file));
    } catch (e) {
      throw new MoltError(
        ErrorCode.KubeConfigInvalid,
        `no kubeconfig given and no service account token: cannot read ${join(dir, file)}`,
        { cause: e, hint },
      );
    }
  const namespace = await readFile(join(dir, 'namespace'), 'utf8').then(
    (t) => t.trim() || undefined,
    () => undefined,
  );
  const kc = new KubeConfig();
  kc.loadFromCluster(root);
  return { kc: boundRequests(kc), namespace };
}

/** The kubeconfig at `file`, or without one the pod's service account (in-cluster). */
export async function loadKubeConfigOrPod(file: string | undefined): Promise<KubeConfig> {
  return file === undefined ? (await loadInClusterKubeConfig()).kc : loadKubeConfig(file);
}

/** The HTTP status of a failed API call, or undefined for a transport failure. */
export function statusOf(e: unknown): number | undefined {
  return e instanceof ApiException ? (e as ApiException<unknown>).code : undefined;
}

/** The parts of a failed call's Status body molt reads (`metav1.Status`). */
export interface ApiStatus {
  readonly reason?: string;
  readonly message?: string;
  /** What the call was about: a missing object names itself here, a missing resource type not. */
  readonly details?: {
    readonly name?: string;
    readonly kind?: string;
    readonly group?: string;
    /** With 429: how long to wait before asking again. */
    readonly retryAfterSeconds?: number;
  };
}

/** The Status in a failed call's body, or undefined (a transport failure, a body not JSON). */
export function apiStatusOf(e: unknown): ApiStatus | undefined {
  if (!(e instanceof ApiException)) return undefined;
  const body: unknown = (e as ApiException<unknown>).body;
  try {
    const status: unknown = typeof body === 'string' ? JSON.parse(body) : body;
    return typeof status === 'object' && status !== null ? status : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The message of the API's Status in a failed call's body: which rule refused it (RBAC, an
 * admission policy such as deploy/kubernetes/rbac.yaml's, NodeRestriction), else undefined.
 */
function apiMessage(e: unknown): string | undefined {
  const message: unknown = apiStatusOf(e)?.message;
  return typeof message === 'string' ? message.slice(0, 500) : undefined;
}

/** A failed API call as a MoltError: `what` says what molt was doing ("evict apps/web"). */
export function kubeError(e: unknown, what: string): MoltError {
  const status = statusOf(e);
  const detail = e instanceof Error ? e.message.split('\n')[0] : String(e);
  const why = apiMessage(e);
  if (status === 401 || status === 403)
    return new MoltError(
      ErrorCode.KubeForbidden,
      `the Kubernetes API refused to ${what} (${String(status)}${why === undefined ? '' : `: ${why}`})`,
      {
        cause: e,
        hint: "grant molt's role this permission (deploy/kubernetes/rbac.yaml) or check the kubeconfig's credentials",
      },
    );
  return new MoltError(ErrorCode.KubeUnavailable, `could not ${what}: ${detail ?? ''}`, {
    cause: e,
    retryable: status === undefined || status >= 500 || status === 429,
  });
}

/**
 * The API server's version (`GET /version`): its binary's `gitVersion` and, when it emulates an
 * older minor (`--emulated-version`), that minor — what it serves to other components.
 */
export async function apiServerVersion(
  kc: KubeConfig,
): Promise<{ readonly version: string; readonly emulatedVersion?: string }> {
  let info;
  try {
    info = await kc.makeApiClient(VersionApi).getCode();
  } catch (e) {
    throw kubeError(e, 'read the API server version (GET /version)');
  }
  const { gitVersion, emulationMajor, emulationMinor } = info;
  const emulated =
    emulationMajor !== undefined && emulationMinor !== undefined && emulationMinor !== ''
      ? `${emulationMajor}.${emulationMinor}`
      : undefined;
  return { version: gitVersion, ...(emulated !== undefined && { emulatedVersion: emulated }) };
}

/** The cluster's Kubernetes version as its API server reports it (`gitVersion`, e.g. `v1.31.2`). */
export async function clusterVersion(kc: KubeConfig): Promise<string> {
  try {
    return (await kc.makeApiClient(VersionApi).getCode()).gitVersion;
  } catch (e) {
    throw kubeError(e, 'read the cluster version (GET /version)');
  }
}
