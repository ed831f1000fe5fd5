// SPDX-License-Identifier: Apache-2.0
/** The API's view of the agent ({@link AgentService}), backed by the runner. */
import { parseImageReference } from '../core/slots/reference.ts';
import type { AgentService, ApiOperationRequest } from './api/service.ts';
import type { Holds } from './machine/hold.ts';
import type { MachinePorts } from './machine/ports.ts';
import type { Runner } from './machine/runner.ts';
import { machineStatus } from './machine/status.ts';
import type { BootInfo } from './ports/boot-info.ts';

export interface AgentServiceFacts {
  readonly node: string;
  readonly role: 'control-plane' | 'worker';
  readonly boot: BootInfo;
  readonly ports: Pick<MachinePorts, 'slots' | 'bootloader'>;
  readonly holds: Holds;
}

export function agentService(runner: Runner, facts: AgentServiceFacts): AgentService {
  return {
    status: () =>
      machineStatus({
        node: facts.node,
        role: facts.role,
        boot: facts.boot,
        slots: facts.ports.slots,
        bootloader: facts.ports.bootloader,
        state: () => runner.state(),
        hold: () => facts.holds.current(),
      }),
    async submit(request: ApiOperationRequest) {
      const { body } = request;
      if (request.kind === 'upgrade') {
        const upgrade = request.body;
        // A reference that cannot name an image is refused now, as 400, not as a failed operation.
        parseImageReference(upgrade.image);
        return runner.submit({
          kind: 'upgrade',
          image: upgrade.image,
          preserve: upgrade.preserve,
          stage: upgrade.stage,
          force: upgrade.force,
          ...(upgrade.acceptQuorumLoss === true && { acceptQuorumLoss: true }),
          ...(upgrade.drain !== undefined && { drain: upgrade.drain }),
        });
      }
      if (request.kind === 'reboot') {
        const reboot = request.body;
        return runner.submit({
          kind: 'reboot',
          force: reboot.force,
          ...(reboot.acceptQuorumLoss === true && { acceptQuorumLoss: true }),
          ...(reboot.apply !== undefined && { apply: reboot.apply }),
        });
      }
      return runner.submit({ kind: request.kind, force: body.force });
    },
    cancel: (identity, operation) =>
      Promise.resolve(runner.cancel(`${identity.role} ${identity.name}`, operation)),
    hold: () => Promise.resolve({ hold: facts.holds.current() }),
    setHold: async (body, identity) => ({
      hold: await facts.holds.set(body, { name: identity.name, role: identity.role }),
    }),
    async clearHold() {
      const released = facts.holds.current();
      await facts.holds.clear();
      return { hold: null, released };
    },
  };
}
