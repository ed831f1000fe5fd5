// SPDX-License-Identifier: Apache-2.0
/**
 * The operator's etcd error normalisation (`platform/etcd/client.ts`, STYLE §4.4), for the store
 * and leadership adapters. A timed-out call needs no action from the user: the next reconcile
 * re-reads the store and settles the unknown outcome.
 */
import { etcdErrors } from '../../../platform/etcd/client.ts';

export const { toMoltError, etcdCall } = etcdErrors(
  'etcd may have lost quorum; the next reconcile re-reads the store',
);
