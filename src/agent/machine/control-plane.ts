// SPDX-License-Identifier: Apache-2.0
/**
 * The control-plane components of this machine (docs/adr/0012 §3): rendered from the machine's own
 * facts and what the cluster applies, run by a supervisor, recorded once healthy.
 *
 * - `apply(name, body)`: render; when the hash is the recorded one and the component runs healthy
 *   on it, answer at once. Otherwise stage the bundle (before anything stops), restart that one
 *   component, and wait until it is healthy within the bound; then record the new spec. When it
 *   does not come up, the previous recorded spec runs again (the machine ends where it was) and the
 *   apply fails `MOLT_KUBE_COMPONENT_UNHEALTHY` with the log's tail. The new spec is recorded only
 *   after it was healthy, so a crash in between restarts the old one at the next start.
 * - `services`: the components as machine services for the upgrade runner — started after etcd in
 *   the order kube-apiserver → kube-controller-manager → kube-scheduler from the recorded specs (the
 *   machine config's initial ones before any apply), stopped in reverse before etcd.
 *
 * One thing at a time: applies and service starts and stops queue behind each other, so a reboot's
 * stop never races an apply's restart.
 */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { renderComponent, type ComponentFacts } from '../../core/kubernetes/render.ts';
import {
  KubeComponentOrder,
  type ComponentApplyBody,
  type ComponentView,
  type ControlPlaneView,
  type KubeComponentName,
  type StagedBundle,
} from '../../protocol/agent-kubernetes.ts';
import type { Clock } from '../ports/clock.ts';
import type {
  ComponentProbe,
  ComponentRecord,
  ComponentRecords,
  ComponentSupervisor,
  KubeBundles,
} from '../ports/control-plane.ts';
import type { Services } from '../ports/services.ts';
import { waitHealthy, waitListening } from './control-plane-wait.ts';

export interface ControlPlaneDeps {
  /** The components this machine runs, with its own facts for each. */
  readonly components: { readonly [N in KubeComponentName]?: ComponentFacts | undefined };
  /** What runs before any apply: the machine config's binaries and their version. */
  readonly initial: { readonly binaries: string; readonly version?: string | undefined };
  readonly supervisor: ComponentSupervisor;
  readonly probe: ComponentProbe;
  readonly bundles: KubeBundles;
  readonly records: ComponentRecords;
  readonly clock: Clock;
  readonly sha256: (text: string) => string;
  /** How long an applied component may take to become healthy. */
  readonly healthTimeoutMs: number;
  /**
   * How long a start at boot may take until the component listens. At boot the scheduler and the
   * controller manager listen only once the API server answers, which on a starved machine takes
   * as long as an applied component may take to become healthy. @default healthTimeoutMs
   */
  readonly startTimeoutMs?: number;
}

/** The machine's control plane, as the API and the upgrade runner use it. */
export interface ControlPlane {
  status(): Promise<ControlPlaneView>;
  prepull(bundle: string): Promise<StagedBundle>;
  apply(name: KubeComponentName, body: ComponentApplyBody): Promise<ComponentView>;
  /** All components: started in order after etcd, stopped in reverse before it. */
  readonly services: Services;
  /** One component by itself (`molt node service start|stop kube-apiserver`). */
  component(name: KubeComponentName): Services;
  /** The components this machine runs, in start order. */
  readonly names: readonly KubeComponentName[];
}

export function createControlPlane(d: ControlPlaneDeps): ControlPlane {
  const names = KubeComponentOrder.filter((n) => d.components[n] !== undefined);
  let queue: Promise<unknown> = Promise.resolve();
  const serially = <T>(f: () => Promise<T>): Promise<T> => {
    const next = queue.then(f, f);
    queue = next.catch(() => undefined);
    return next;
  };
  const factsOf = (name: KubeComponentName): ComponentFacts => {
    const facts = d.components[name];
    if (facts === undefined)
      throw new MoltError(ErrorCode.NotControlPlane, `this machine runs no ${name}`, {
        hint: `it runs ${names.join(', ') || 'no control-plane component'} (its machine config's controlPlane.components)`,
      });
    return facts;
  };
  const initial = (name: KubeComponentName): ComponentRecord => ({
    spec: renderComponent({
      name,
      facts: factsOf(name),
      binDir: d.initial.binaries,
      sha256: d.sha256,
    }),
    ...(d.initial.version !== undefined && { version: d.initial.version }),
  });
  const current = async (name: KubeComponentName): Promise<ComponentRecord> =>
    (await d.records.load())[name] ?? initial(name);

  const view = async (name: KubeComponentName, rec: ComponentRecord): Promise<ComponentView> => {
    const state = await d.supervisor.state(name);
    const probe = state.running ? await d.probe.healthy(name, rec.spec.port) : undefined;
    const other = state.running && state.hash !== undefined && state.hash !== rec.spec.hash;
    const message = other
      ? 'runs another spec than the recorded one'
      : probe?.ok === false
        ? probe.message
        : undefined;
    return {
      name,
      ...recorded(rec),
      running: state.running,
      healthy: probe?.ok === true && !other,
      ...(state.pid !== undefined && { pid: state.pid }),
      ...(state.since !== undefined && { since: state.since }),
      ...(message !== undefined && { message }),
    };
  };
  const waits = { supervisor: d.supervisor, probe: d.probe, clock: d.clock };

  /** Restart `name` on `rec`, wait healthy; on failure run `previous` again and throw. */
  const replace = async (
    name: KubeComponentName,
    rec: ComponentRecord,
    previous: ComponentRecord,
  ): Promise<void> => {
    await d.supervisor.run(rec.spec);
    const failure = await waitHealthy(waits, rec.spec, d.healthTimeoutMs);
    if (failure === undefined) return;
    const tail = await d.supervisor.logTail(name, 40);
    await d.supervisor.run(previous.spec);
    const back = await waitHealthy(waits, previous.spec, d.healthTimeoutMs);
    throw new MoltError(
      ErrorCode.KubeComponentUnhealthy,
      `${name} did not become healthy on ${rec.version ?? 'its new spec'} (${failure}); ${
        back === undefined
          ? `it runs its previous spec (${previous.version ?? 'initial'}) again, healthy`
          : `its previous spec (${previous.version ?? 'initial'}) was started again but is not healthy either (${back})`
      }. Its log ends:\n${tail}`,
      {
        hint: `the machine is back on the spec it ran; fix the apply (a flag the binary refuses?) and apply again`,
        details: {
          component: name,
          restored: previous.spec.hash,
          restoredHealthy: back === undefined,
        },
      },
    );
  };

  const apply = async (name: KubeComponentName, body: ComponentApplyBody) => {
    const facts = factsOf(name);
    const spec = renderComponent({
      name,
      facts,
      apply: body,
      binDir: d.bundles.dirFor(body.bundle),
      sha256: d.sha256,
    });
    const rec: ComponentRecord = {
      spec,
      version: body.version,
      bundle: body.bundle,
      ...(body.emulatedVersion !== undefined && { emulatedVersion: body.emulatedVersion }),
    };
    const previous = await current(name);
    if (spec.hash === previous.spec.hash) {
      const now = await view(name, previous);
      if (now.healthy) return now;
    }
    await d.bundles.stage(body.bundle, body.version);
    await replace(name, rec, previous);
    await d.records.save({ ...(await d.records.load()), [name]: rec });
    return view(name, rec);
  };

  /** Start one component on its recorded spec unless it already runs it. */
  const start = async (name: KubeComponentName): Promise<void> => {
    const rec = await current(name);
    const state = await d.supervisor.state(name);
    if (state.running && state.hash === rec.spec.hash) return;
    await d.supervisor.run(rec.spec);
    await waitListening(waits, rec.spec, d.startTimeoutMs ?? d.healthTimeoutMs);
  };

  const services: Services = {
    startAll: () =>
      serially(async () => {
        for (const name of names) await start(name);
      }),
    stopAll: () =>
      serially(async () => {
        for (const name of [...names].reverse()) await d.supervisor.stop(name);
      }),
    running: async () => {
      const states = await Promise.all(names.map((n) => d.supervisor.state(n)));
      return names.filter((_, i) => states[i]?.running === true);
    },
  };

  return {
    status: async () => ({
      components: await Promise.all(names.map(async (n) => view(n, await current(n)))),
      staged: await d.bundles.staged(),
    }),
    prepull: (bundle) => d.bundles.stage(bundle),
    apply: (name, body) => serially(() => apply(name, body)),
    services,
    component: (name) => ({
      startAll: () => serially(() => start(name)),
      stopAll: () => serially(() => d.supervisor.stop(name)),
      running: async () => ((await d.supervisor.state(name)).running ? [name] : []),
    }),
    names,
  };
}

/** The recorded facts of a component's view. */
function recorded(rec: ComponentRecord) {
  return {
    ...(rec.version !== undefined && { version: rec.version }),
    ...(rec.bundle !== undefined && { bundle: rec.bundle }),
    ...(rec.emulatedVersion !== undefined && { emulatedVersion: rec.emulatedVersion }),
    hash: rec.spec.hash,
  };
}
