// SPDX-License-Identifier: Apache-2.0
/**
 * {@link ServiceControl} on a lab machine: each service is one of the {@link Services} the agent
 * composes (compose.ts: the etcd service, the components' process services), started and stopped
 * through it — never spawned here — and read through the convention they share: its PID in
 * `<root>/run/<name>.pid`, its output in `<root>/run/<name>.log`.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import {
  serviceNotFound,
  type ServiceControl,
  type ServiceView,
} from '../../ports/service-control.ts';
import type { Services } from '../../ports/services.ts';
import { logLines } from './log-file.ts';

/** The PID a service's PID file names (the service itself judges whether it runs). */
async function readPid(path: string): Promise<number | undefined> {
  const pid = Number.parseInt(await readFile(path, 'utf8').catch(() => ''), 10);
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

/** One service by its name, as the machine's composition built it. */
export interface NamedService {
  readonly name: string;
  readonly service: Services;
}

export function createLabServiceControl(o: {
  readonly root: string;
  readonly services: readonly NamedService[];
}): ServiceControl {
  const run = join(o.root, 'run');
  const find = (name: string): NamedService => {
    const s = o.services.find((x) => x.name === name);
    if (s === undefined)
      throw serviceNotFound(
        name,
        o.services.map((x) => x.name),
      );
    return s;
  };
  const view = async (s: NamedService): Promise<ServiceView> => {
    const running = (await s.service.running()).length > 0;
    if (!running) return { name: s.name, running };
    const pidFile = join(run, `${s.name}.pid`);
    const pid = await readPid(pidFile);
    // The PID file is written when the process is spawned: its time is the start's.
    const since = await stat(pidFile).then(
      (st) => st.mtime.toISOString(),
      () => undefined,
    );
    return {
      name: s.name,
      running,
      ...(pid !== undefined && { pid }),
      ...(since !== undefined && { since }),
    };
  };
  return {
    list: () => Promise.all(o.services.map(view)),
    async start(name) {
      const s = find(name);
      await s.service.startAll();
      return view(s);
    },
    async stop(name) {
      const s = find(name);
      await s.service.stopAll();
      return view(s);
    },
    async restart(name) {
      const s = find(name);
      await s.service.stopAll();
      await s.service.startAll();
      return view(s);
    },
    // An unknown name rejects (it does not throw before the promise).
    logs: (name, options) =>
      Promise.resolve().then(() => logLines(join(run, `${find(name).name}.log`), options)),
  };
}
