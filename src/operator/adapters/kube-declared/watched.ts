// SPDX-License-Identifier: Apache-2.0
/**
 * A list of Kubernetes objects kept current by a watch (client-node's informer: one list, then
 * watch from its resourceVersion, listing again on 410 Gone), so each pass reads the declared
 * objects from memory instead of listing every kind again, and a change wakes the loop at once.
 *
 * Only a change a pass reads wakes it: the spec (`metadata.generation`), labels, annotations,
 * finalizers or a deletion — not a status write.
 *
 * client-node's informer stops for good on an error (a watch refused, the API server away): it is
 * started again after `retryMs`. Until the first list has come, and while the watch is down,
 * `items()` throws why — the declared runner then keeps what it last read, as it does when a list
 * fails.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { makeInformer, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import type { ListPromise } from '@kubernetes/client-node';
import { kubeError } from '../../../platform/kube/client.ts';

export interface WatchedList<T> {
  /**
   * The objects now; the first call waits for the first list (at most `firstListMs`).
   * @throws why the list is not known (not listed yet, or the watch is down)
   */
  items(): Promise<readonly T[]>;
  stop(): Promise<void>;
}

export interface WatchedListOptions<T extends KubernetesObject> {
  readonly kc: KubeConfig;
  /** The watch's path: `/apis/molt.dev/v1alpha1/namespaces/molt-system/pools`, `/api/v1/nodes`. */
  readonly path: string;
  readonly list: ListPromise<T>;
  readonly labelSelector?: string;
  /** What is listed, for errors: `pools.molt.dev in molt-system`. */
  readonly what: string;
  /** Told after each change the watch brings (not for the first list). */
  readonly onChange: () => void;
  /** @default 5000 */
  readonly retryMs?: number;
  /** @default 15000 */
  readonly firstListMs?: number;
}

export function watchedList<T extends KubernetesObject>(o: WatchedListOptions<T>): WatchedList<T> {
  const informer = makeInformer(o.kc, o.path, o.list, o.labelSelector);
  let down: Error | undefined = new Error(`${o.what}: not listed yet`);
  let synced = false;
  let stopped = false;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let errors = 0;

  const fail = (e: unknown): void => {
    errors++;
    down = kubeError(e, `watch ${o.what}`);
    if (stopped) return;
    clearTimeout(retry);
    retry = setTimeout(() => void begin(), o.retryMs ?? 5_000);
    retry.unref();
  };
  async function begin(): Promise<void> {
    const before = errors;
    try {
      await informer.start();
    } catch (e) {
      fail(e);
      return;
    }
    // start() resolves once listed and watching, or after the error callback ran.
    if (errors === before) {
      down = undefined;
      synced = true;
    }
  }
  informer.on('error', fail);
  // What a pass reads of an object: a write to its status (the operator's own verdicts, a Node's
  // heartbeat) changes none of it, and must not wake the loop into another pass for nothing.
  const seen = new Map<string, string>();
  const read = (obj: T): string => {
    const m = obj.metadata;
    return JSON.stringify([
      m?.generation,
      m?.labels,
      m?.annotations,
      m?.deletionTimestamp,
      m?.finalizers,
    ]);
  };
  const remember = (obj: T): boolean => {
    const uid = obj.metadata?.uid ?? '';
    const now = read(obj);
    const before = seen.get(uid);
    seen.set(uid, now);
    return before !== now;
  };
  const changed = (obj: T): void => {
    if (remember(obj) && synced) o.onChange();
  };
  informer.on('add', changed);
  informer.on('update', changed);
  informer.on('delete', (obj: T) => {
    seen.delete(obj.metadata?.uid ?? '');
    if (synced) o.onChange();
  });
  const first = begin();

  return {
    async items() {
      if (!synced)
        await Promise.race([first, sleep(o.firstListMs ?? 15_000, undefined, { ref: false })]);
      if (down !== undefined) throw down;
      return informer.list();
    },
    async stop() {
      stopped = true;
      clearTimeout(retry);
      await informer.stop();
    },
  };
}
