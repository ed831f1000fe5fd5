// SPDX-License-Identifier: Apache-2.0
/**
 * The agent's control-plane routes (docs/adr/0012 §3, protocol/agent-kubernetes.ts): the
 * components' status, pre-pulling a bundle and applying one component. Reads are open to every
 * role; the POSTs need `operate` (the onRequest hook in routes.ts guards every non-GET). A machine
 * that renders no components — a worker — answers `MOLT_NOT_CONTROL_PLANE` to all three.
 */
import type { FastifyInstance } from 'fastify';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { parseInput } from '../../platform/https/input.ts';
import { answerWhenDone } from './long-answer.ts';
import {
  ComponentApplyBody,
  KubeComponentName,
  KubernetesRoutes,
  PrepullBody,
  type ComponentView,
  type ControlPlaneView,
  type StagedBundle,
} from '../../protocol/agent-kubernetes.ts';

/** What the routes need of the machine's control plane (agent/machine/control-plane.ts). */
export interface KubernetesService {
  status(): Promise<ControlPlaneView>;
  prepull(bundle: string): Promise<StagedBundle>;
  apply(name: KubeComponentName, body: ComponentApplyBody): Promise<ComponentView>;
}

/** `KubernetesRoutes.component(name)` as a route pattern. */
const componentRoute = '/v1/kubernetes/components/:name';

export function registerKubernetesRoutes(
  app: FastifyInstance,
  service: KubernetesService | undefined,
): void {
  const need = (): KubernetesService => {
    if (service !== undefined) return service;
    throw new MoltError(
      ErrorCode.NotControlPlane,
      'this machine runs no Kubernetes control-plane components',
      {
        hint: 'ask a control-plane machine whose machine config has a controlPlane section',
      },
    );
  };
  app.get(KubernetesRoutes.kubernetes, () => need().status());
  app.post(KubernetesRoutes.prepull, async (request) => {
    const cp = need();
    return cp.prepull(parseInput(PrepullBody, request.body ?? {}, 'prepull request').bundle);
  });
  app.post<{ Params: { name: string } }>(componentRoute, async (request, reply) => {
    const cp = need();
    const name = parseInput(KubeComponentName, request.params.name, 'component name');
    const body = parseInput(ComponentApplyBody, request.body ?? {}, 'component apply');
    // An apply waits for the component to become healthy (up to its bound, twice when it rolls
    // back).
    return answerWhenDone(reply, () => cp.apply(name, body));
  });
}
