// SPDX-License-Identifier: Apache-2.0
/**
 * In-memory control-plane ports: a supervisor whose "processes" are map entries, a probe that
 * asks it, bundles staged by name only, records in memory. A spec can be made to exit at start
 * (`exits`) or to run without ever becoming healthy (`sick`), as a refused flag or a broken
 * binary would.
 */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { ComponentSpec } from '../../core/kubernetes/render.ts';
import type { StagedBundle } from '../../protocol/agent-kubernetes.ts';
import type {
  ComponentProbe,
  ComponentRecord,
  ComponentRecords,
  ComponentState,
  ComponentSupervisor,
  KubeBundles,
} from './control-plane.ts';

export interface FakeSupervisor extends ComponentSupervisor {
  /** `run <name> <hash 8>`, `stop <name>`, in order; a `run` that kept the process is not listed. */
  readonly calls: string[];
  /** A spec for which this is true exits at once after starting. */
  exits: (spec: ComponentSpec) => boolean;
  /** A spec for which this is true runs but never answers healthy. */
  sick: (spec: ComponentSpec) => boolean;
  spec(name: string): ComponentSpec | undefined;
}

export function createFakeSupervisor(): FakeSupervisor {
  const procs = new Map<string, { spec: ComponentSpec; pid: number; alive: boolean }>();
  const logs = new Map<string, string[]>();
  let pid = 1000;
  const fake: FakeSupervisor = {
    calls: [],
    exits: () => false,
    sick: () => false,
    spec: (name) => procs.get(name)?.spec,
    run(spec) {
      const p = procs.get(spec.name);
      if (p?.alive === true && p.spec.hash === spec.hash) return Promise.resolve();
      fake.calls.push(`run ${spec.name} ${spec.hash.slice(0, 8)}`);
      const alive = !fake.exits(spec);
      procs.set(spec.name, { spec, pid: ++pid, alive });
      const log = logs.get(spec.name) ?? [];
      log.push(`started ${spec.args.join(' ')}`, ...(alive ? [] : ['Error: unknown flag']));
      logs.set(spec.name, log);
      return Promise.resolve();
    },
    stop(name) {
      const p = procs.get(name);
      if (p?.alive === true) fake.calls.push(`stop ${name}`);
      procs.delete(name);
      return Promise.resolve();
    },
    state(name): Promise<ComponentState> {
      const p = procs.get(name);
      return Promise.resolve(
        p?.alive === true ? { running: true, pid: p.pid, hash: p.spec.hash } : { running: false },
      );
    },
    logTail: (name, lines) => Promise.resolve((logs.get(name) ?? []).slice(-lines).join('\n')),
  };
  return fake;
}

/** Healthy is: the supervisor runs it and it is not sick. */
export function createFakeProbe(supervisor: FakeSupervisor): ComponentProbe {
  const up = async (name: string): Promise<boolean> => {
    const spec = supervisor.spec(name);
    return (await supervisor.state(name)).running && spec !== undefined && !supervisor.sick(spec);
  };
  return {
    healthy: async (name) =>
      (await up(name)) ? { ok: true, message: 'ok' } : { ok: false, message: 'connection refused' },
    listening: async (port) => {
      for (const name of ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler'])
        if (supervisor.spec(name)?.port === port && (await supervisor.state(name)).running)
          return true;
      return false;
    },
  };
}

export interface FakeBundles extends KubeBundles {
  /** Bundles pulled, in order (a staged one is not pulled again). */
  readonly pulls: string[];
  /** The version each bundle holds; a bundle not listed is not in the registry. */
  readonly versions: Map<string, string>;
}

export function createFakeBundles(versions: Record<string, string> = {}): FakeBundles {
  const staged = new Map<string, StagedBundle>();
  const dirFor = (bundle: string): string => `/m/state/kubernetes/${bundle.slice(-64)}`;
  const fake: FakeBundles = {
    pulls: [],
    versions: new Map(Object.entries(versions)),
    dirFor,
    stage(bundle, version) {
      const known = staged.get(bundle);
      if (known !== undefined) return Promise.resolve(known);
      const holds = fake.versions.get(bundle);
      if (holds === undefined)
        return Promise.reject(new MoltError(ErrorCode.RegistryNotFound, `${bundle}: not found`));
      if (version !== undefined && version !== holds)
        return Promise.reject(
          new MoltError(ErrorCode.KubeBundleInvalid, `${bundle} holds ${holds}, not ${version}`),
        );
      fake.pulls.push(bundle);
      const s = { bundle, version: holds, dir: dirFor(bundle) };
      staged.set(bundle, s);
      return Promise.resolve(s);
    },
    staged: () => Promise.resolve([...staged.values()]),
  };
  return fake;
}

export function createInMemoryRecords(): ComponentRecords & {
  saved: Record<string, ComponentRecord>;
} {
  const r = {
    saved: {} as Record<string, ComponentRecord>,
    load: () => Promise.resolve({ ...r.saved }),
    save: (records: Readonly<Record<string, ComponentRecord>>) => {
      r.saved = { ...records };
      return Promise.resolve();
    },
  };
  return r;
}
