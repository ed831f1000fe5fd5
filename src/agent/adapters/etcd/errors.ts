// SPDX-License-Identifier: Apache-2.0
/**
 * The agent's etcd error normalisation (`platform/etcd/client.ts`, STYLE §4.4). A timed-out call
 * points the user at the control-plane machines: on the agent, etcd timing out usually means a
 * member is down or rebooting.
 */
import { etcdErrors } from '../../../platform/etcd/client.ts';

export const { toMoltError, etcdCall } = etcdErrors(
  'etcd may have lost quorum; check `molt node status` of the control-plane machines',
);
