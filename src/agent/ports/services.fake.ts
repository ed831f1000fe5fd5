// SPDX-License-Identifier: Apache-2.0
/** In-memory {@link Services}: level-triggered start/stop, and a switch that makes stopping fail. */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { Services } from './services.ts';

export interface FakeServices extends Services {
  /** While true, `stopAll` throws `MOLT_SERVICE_STOP_FAILED` and leaves the services running. */
  stuck: boolean;
  readonly calls: string[];
}

/** Fake services named `names` (all running at first). */
export function createFakeServices(names: readonly string[] = ['etcd']): FakeServices {
  let running = [...names];
  const fake: FakeServices = {
    stuck: false,
    calls: [],
    running: () => Promise.resolve([...running]),
    startAll() {
      fake.calls.push('startAll');
      running = [...names];
      return Promise.resolve();
    },
    stopAll() {
      fake.calls.push('stopAll');
      if (fake.stuck && running.length > 0)
        return Promise.reject(
          new MoltError(ErrorCode.ServiceStopFailed, `${running.join(', ')} did not stop`),
        );
      running = [];
      return Promise.resolve();
    },
  };
  return fake;
}
