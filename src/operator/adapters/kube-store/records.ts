// SPDX-License-Identifier: Apache-2.0
/**
 * The records of `store: kubernetes` (docs/adr/0016): `OperatorRecord` objects of molt.dev
 * (deploy/kubernetes/crds.yaml) in one namespace, each `spec: {kind, key, data}` with `data` the
 * JSON the etcd store would keep under that key. The API server's etcd is the store; every
 * conditional write is a replace naming the `metadata.resourceVersion` read, so a writer that lost
 * a race gets 409 Conflict and re-reads ({@link retrying}) — never a lost update.
 * Object names are `names.ts`'; the key is kept in `spec.key` too and checked when read.
 */
import { isDeepStrictEqual } from 'node:util';
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import {
  DelegateBackoff,
  handleWhen,
  handleWhenResult,
  retry,
  type IRetryBackoffContext,
} from 'cockatiel';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { apiStatusOf, kubeError, statusOf } from '../../../platform/kube/client.ts';
import {
  GROUP,
  KIND_LABEL,
  MAX_RECORD_BYTES,
  missingObject,
  nameOf,
  PLURAL,
  recordOf,
  VERSION,
  type RecordKind,
  type RecordObject,
} from './names.ts';

export { nameOf, PLURAL, type RecordKind } from './names.ts';

/** One record as read: its data and the resourceVersion a conditional write must name. */
export interface Read {
  readonly kind: RecordKind;
  readonly key: string;
  readonly data: unknown;
  readonly rv: string;
}

/** The outcome of a conditional write that did not land: somebody else wrote first. */
export const Conflict = Symbol('conflict');

export interface RecordsOptions {
  readonly kc: KubeConfig;
  readonly namespace: string;
  /** Lost compare-and-swap races one write tolerates before failing. @default 100 */
  readonly maxAttempts?: number;
}

/** At most 30 tries, each after the server's Retry-After (1 s if none), kept to 0.1–2 s. */
const whileTooMany = retry(
  handleWhen((e) => statusOf(e) === 429),
  {
    maxAttempts: 29,
    backoff: new DelegateBackoff(({ result }: IRetryBackoffContext<unknown>) => {
      const after = 'error' in result ? apiStatusOf(result.error)?.details?.retryAfterSeconds : 1;
      return Math.min(2_000, Math.max(100, (after ?? 1) * 1000));
    }),
  },
);

/** The record objects of one namespace: reads, creates, conditional replaces, deletes. */
export class Records {
  readonly namespace: string;
  readonly maxAttempts: number;
  private readonly api: CustomObjectsApi;

  constructor(o: RecordsOptions) {
    this.api = o.kc.makeApiClient(CustomObjectsApi);
    this.namespace = o.namespace;
    this.maxAttempts = o.maxAttempts ?? 100;
  }

  /**
   * `f`, again while the API server answers 429 (it did not process the request: safe to repeat
   * for any verb). It does so while a CRD's storage (re)initializes, right after the CRD is
   * installed or the API server restarts, and under API Priority and Fairness limits.
   */
  private call<T>(f: () => Promise<T>): Promise<T> {
    return whileTooMany.execute(f);
  }

  private where(): { group: string; version: string; namespace: string; plural: string } {
    return { group: GROUP, version: VERSION, namespace: this.namespace, plural: PLURAL };
  }

  /** A linearizable read of one record (the API server reads etcd with a quorum). */
  async get(kind: RecordKind, key: string): Promise<Read | undefined> {
    const name = nameOf(kind, key);
    let obj: RecordObject;
    try {
      obj = (await this.call(() =>
        this.api.getNamespacedCustomObject({ ...this.where(), name }),
      )) as RecordObject;
    } catch (e) {
      if (missingObject(e)) return undefined;
      throw this.error(e, `read ${PLURAL}.${GROUP} ${this.namespace}/${name}`);
    }
    return this.parse(obj, kind, key);
  }

  /** Every record of these kinds, in one list: one etcd revision, so consistent with each other. */
  async list(kinds: readonly RecordKind[]): Promise<Read[]> {
    let list: { items?: RecordObject[] };
    try {
      list = (await this.call(() =>
        this.api.listNamespacedCustomObject({
          ...this.where(),
          labelSelector: `${KIND_LABEL} in (${kinds.join(',')})`,
        }),
      )) as { items?: RecordObject[] };
    } catch (e) {
      throw this.error(e, `list ${PLURAL}.${GROUP} in ${this.namespace}`);
    }
    return (list.items ?? []).map((o) => this.parse(o));
  }

  /** Create the record; `Conflict` when it exists already. */
  async create(kind: RecordKind, key: string, data: unknown): Promise<'created' | typeof Conflict> {
    const body = this.body(kind, key, data);
    try {
      await this.call(() => this.api.createNamespacedCustomObject({ ...this.where(), body }));
      return 'created';
    } catch (e) {
      if (statusOf(e) === 409) return Conflict;
      if (await this.landed(e, { kind, key, data })) return 'created';
      throw this.error(e, `create ${PLURAL}.${GROUP} ${this.namespace}/${body.metadata.name}`);
    }
  }

  /** Replace the record if it is still at `rv`; `Conflict` when it changed or went meanwhile. */
  async replace(
    kind: RecordKind,
    key: string,
    data: unknown,
    rv: string,
  ): Promise<'written' | typeof Conflict> {
    const body = this.body(kind, key, data, rv);
    try {
      await this.call(() =>
        this.api.replaceNamespacedCustomObject({
          ...this.where(),
          name: body.metadata.name,
          body,
        }),
      );
      return 'written';
    } catch (e) {
      if (statusOf(e) === 409 || missingObject(e)) return Conflict;
      if (await this.landed(e, { kind, key, data, rv })) return 'written';
      throw this.error(e, `replace ${PLURAL}.${GROUP} ${this.namespace}/${body.metadata.name}`);
    }
  }

  /** Create or replace whatever is there (last writer wins). */
  async put(kind: RecordKind, key: string, data: unknown): Promise<void> {
    await this.retrying(`writing ${kind} ${key}`, async () => {
      const now = await this.get(kind, key);
      return now === undefined
        ? this.create(kind, key, data)
        : this.replace(kind, key, data, now.rv);
    });
  }

  /** Delete a record, idempotently; false when it was not there. */
  async remove(kind: RecordKind, key: string): Promise<boolean> {
    const name = nameOf(kind, key);
    try {
      await this.call(() => this.api.deleteNamespacedCustomObject({ ...this.where(), name }));
      return true;
    } catch (e) {
      if (missingObject(e)) return false;
      throw this.error(e, `delete ${PLURAL}.${GROUP} ${this.namespace}/${name}`);
    }
  }

  /**
   * Run `attempt` until it returns something other than {@link Conflict}, with a short random
   * pause between tries so racing writers spread out; `MOLT_KUBE_UNAVAILABLE` (retryable) after
   * `maxAttempts` lost races.
   */
  async retrying<T>(what: string, attempt: () => Promise<T | typeof Conflict>): Promise<T> {
    const outcome = await retry(
      handleWhenResult((r) => r === Conflict),
      {
        maxAttempts: this.maxAttempts - 1,
        backoff: new DelegateBackoff(({ attempt: n }) => Math.random() * Math.min(50, 5 * n - 3)),
      },
    ).execute(attempt);
    if (outcome !== Conflict) return outcome;
    throw new MoltError(
      ErrorCode.KubeUnavailable,
      `${what}: lost ${String(this.maxAttempts)} races in a row`,
      {
        retryable: true,
      },
    );
  }

  /**
   * Whether a write whose answer was lost (`e` a transport failure, no HTTP status) landed after
   * all: a re-read holding exactly our data at a new resourceVersion says it did. Otherwise the
   * caller gets the error (retryable), and re-reads before deciding anything — the write may still
   * land, or another writer's may stand in its place.
   */
  private async landed(
    e: unknown,
    w: { kind: RecordKind; key: string; data: unknown; rv?: string },
  ): Promise<boolean> {
    if (statusOf(e) !== undefined) return false;
    const { kind, key, data, rv } = w;
    const now = await this.get(kind, key).catch(() => undefined);
    return (
      now !== undefined &&
      now.rv !== rv &&
      isDeepStrictEqual(now.data, JSON.parse(JSON.stringify(data)) as unknown)
    );
  }

  /**
   * Fail at once, with what to do, when the store cannot work at all: the CRD not installed (the
   * API has no such resource), or no right to list the records.
   */
  async check(): Promise<void> {
    try {
      await this.call(() => this.api.listNamespacedCustomObject({ ...this.where(), limit: 1 }));
    } catch (e) {
      throw this.error(e, `list ${PLURAL}.${GROUP} in ${this.namespace}`);
    }
  }

  private body(kind: RecordKind, key: string, data: unknown, rv?: string) {
    const body = {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'OperatorRecord',
      metadata: {
        name: nameOf(kind, key),
        namespace: this.namespace,
        labels: { [KIND_LABEL]: kind },
        ...(rv !== undefined && { resourceVersion: rv }),
      },
      spec: { kind, key, data },
    };
    const bytes = Buffer.byteLength(JSON.stringify(body));
    if (bytes > MAX_RECORD_BYTES)
      throw new MoltError(
        ErrorCode.StoreUnavailable,
        `the ${kind} record ${key} would take ${String(bytes)} bytes, more than one object holds (${String(MAX_RECORD_BYTES)})`,
        { hint: 'for fleets this large, use store: {etcd: [...]} (docs/adr/0016)' },
      );
    return body;
  }

  private parse(obj: RecordObject, kind?: RecordKind, key?: string): Read {
    const name = obj.metadata?.name ?? '';
    const ours = recordOf(obj);
    if (ours === undefined || (kind !== undefined && (ours.kind !== kind || ours.key !== key)))
      throw new MoltError(
        ErrorCode.StoreCorrupt,
        `${PLURAL}.${GROUP} ${this.namespace}/${name} is not a record molt wrote${kind === undefined ? '' : ` (expected the ${kind} ${String(key)})`}`,
        { hint: `inspect it with \`kubectl get ${PLURAL} -n ${this.namespace} ${name} -o yaml\`` },
      );
    return { ...ours, data: obj.spec?.data, rv: obj.metadata?.resourceVersion ?? '' };
  }

  /** The API's failure as molt's, naming a missing CRD or namespace exactly. */
  private error(e: unknown, what: string): MoltError {
    if (statusOf(e) === 404) {
      const details = apiStatusOf(e)?.details;
      if (details?.kind === 'namespaces')
        return new MoltError(
          ErrorCode.StoreUnavailable,
          `the namespace ${this.namespace} of the operator's store does not exist`,
          { cause: e, hint: 'kubectl apply -k deploy/kubernetes (or create the namespace)' },
        );
      if (details?.name === undefined)
        return new MoltError(
          ErrorCode.StoreUnavailable,
          `the CRD ${PLURAL}.${GROUP} is not installed: kubectl apply -k deploy/kubernetes`,
          {
            cause: e,
            hint: 'the store keeps its records in OperatorRecord objects (docs/adr/0016)',
          },
        );
    }
    return kubeError(e, what);
  }
}
