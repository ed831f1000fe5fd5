// SPDX-License-Identifier: Apache-2.0
/**
 * Bringing the declared molt.dev objects into the operator at the start of each of the leader's
 * passes (docs/adr/0011): one controller per kind, each owning its outputs and its objects'
 * verdicts — Pools (`pools.ts`), labelled Nodes (`nodes.ts`), MachineHolds (`holds.ts`), Rollout
 * specs (`rollouts.ts`), KubernetesClusters (`kubernetes.ts`), ImagePolicies (`images.ts`). The
 * objects come from the source's informers; the runner reads them and the store once a pass, runs
 * the controllers in that order and writes every verdict back in one report. When the cluster
 * cannot be read, the pass goes on with the pools it last had — a cluster that is away never stops
 * or unleashes a rollout.
 */
import { errorLine } from '../../../core/errors.ts';
import { holdController } from './holds.ts';
import { imageController } from './images.ts';
import { kubernetesController } from './kubernetes.ts';
import { nodeController } from './nodes.ts';
import { poolController } from './pools.ts';
import { rolloutActions, rolloutController } from './rollouts.ts';
import type { DeclaredController, DeclaredDeps } from './controller.ts';

export type { DeclaredDeps } from './controller.ts';

export interface DeclaredRunner {
  /** Read the objects and apply them; never throws (failures are logged once each). */
  refresh(): Promise<void>;
  /** Call `listener` whenever a declared object changes (when the source can tell). */
  onChange(listener: () => void): void;
  /** Stop reading the objects. */
  close(): Promise<void>;
}

export function createDeclaredRunner(d: DeclaredDeps): DeclaredRunner {
  const warned = new Set<string>();
  const once = (key: string, line: string): void => {
    if (warned.has(key)) return;
    warned.add(key);
    d.log(line);
  };
  const act = rolloutActions(d, once);
  const controllers: readonly DeclaredController[] = [
    poolController(d, act),
    nodeController(d, once),
    holdController(d),
    rolloutController(d, act),
    kubernetesController(d),
    imageController(d),
  ];
  const apply = async (): Promise<void> => {
    const pass = { declared: await d.source.read(), stored: await d.store.read(), now: d.now() };
    const verdicts = [];
    for (const c of controllers) verdicts.push(...(await c.apply(pass)));
    await d.source.report(verdicts);
  };
  let lastError = '';
  return {
    onChange: (listener) => d.source.onChange?.(listener),
    close: async () => {
      await d.source.close?.();
    },
    async refresh() {
      try {
        await apply();
        if (lastError !== '') d.log('declared molt.dev objects: read again');
        lastError = '';
      } catch (e) {
        const line = errorLine(e);
        if (line !== lastError)
          d.log(
            `declared molt.dev objects: ${line} (keeping the pools last read; retrying next pass)`,
          );
        lastError = line;
      }
    },
  };
}
