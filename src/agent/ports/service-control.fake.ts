// SPDX-License-Identifier: Apache-2.0
/**
 * A scripted {@link ServiceControl} for API and CLI tests: named services that start and stop as
 * asked (each call recorded), and log lines a test sets; a followed log then waits until aborted.
 */
import { serviceNotFound, type ServiceControl, type ServiceView } from './service-control.ts';

export interface FakeServiceControl extends ServiceControl {
  /** `start etcd`, `stop kube-apiserver`, … in call order. */
  readonly calls: string[];
  /** Each service's log lines. */
  readonly logLines: Record<string, string[]>;
  /** The options of the last `logs` call. */
  lastLogs?: { name: string; tail: number; follow: boolean };
  /** Followed logs whose signal aborted (their client left). */
  followsEnded: number;
}

export function createFakeServiceControl(
  names: readonly string[] = ['etcd', 'kube-apiserver'],
): FakeServiceControl {
  const running = new Map(names.map((n, i) => [n, 1000 + i] as const));
  const view = (name: string): ServiceView => {
    const pid = running.get(name);
    return pid === undefined ? { name, running: false } : { name, running: true, pid };
  };
  const find = (name: string): string => {
    if (!names.includes(name)) throw serviceNotFound(name, names);
    return name;
  };
  const fake: FakeServiceControl = {
    calls: [],
    logLines: {},
    followsEnded: 0,
    list: () => Promise.resolve(names.map(view)),
    start(name) {
      fake.calls.push(`start ${find(name)}`);
      running.set(name, running.get(name) ?? 2000 + fake.calls.length);
      return Promise.resolve(view(name));
    },
    stop(name) {
      fake.calls.push(`stop ${find(name)}`);
      running.delete(name);
      return Promise.resolve(view(name));
    },
    restart(name) {
      fake.calls.push(`restart ${find(name)}`);
      running.set(name, 3000 + fake.calls.length);
      return Promise.resolve(view(name));
    },
    logs(name, o) {
      find(name);
      fake.lastLogs = { name, tail: o.tail, follow: o.follow };
      const lines = (fake.logLines[name] ?? []).slice(-o.tail || Infinity);
      return Promise.resolve(
        (async function* () {
          yield* o.tail === 0 ? [] : lines;
          if (o.follow && !o.signal.aborted)
            await new Promise((resolve) => {
              o.signal.addEventListener('abort', resolve);
            });
          if (o.follow) fake.followsEnded++;
        })(),
      );
    },
  };
  return fake;
}
