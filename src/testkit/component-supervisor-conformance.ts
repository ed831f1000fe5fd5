// SPDX-License-Identifier: Apache-2.0
/**
 * What every {@link ComponentSupervisor} must do (src/agent/ports/control-plane.ts); run against
 * the fake, the lab's processes and the systemd units (on a stand-in systemctl here).
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { ComponentSpec } from '../core/kubernetes/render.ts';
import type { ComponentSupervisor } from '../agent/ports/control-plane.ts';

export interface SupervisorHarness {
  readonly supervisor: ComponentSupervisor;
  /** A spec of component `name` that keeps running; `variant` changes its hash. */
  spec(name: string, variant: string): ComponentSpec;
  close(): Promise<void>;
}

export function componentSupervisorConformance(
  name: string,
  create: () => Promise<SupervisorHarness>,
): void {
  describe(`ComponentSupervisor conformance: ${name}`, () => {
    const open: SupervisorHarness[] = [];
    const fresh = async (): Promise<SupervisorHarness> => {
      const h = await create();
      open.push(h);
      return h;
    };
    after(async () => {
      for (const h of open) await h.close();
    });

    it('runs a spec and reports it running on that spec’s hash', async () => {
      const h = await fresh();
      const spec = h.spec('kube-scheduler', 'one');
      assert.equal((await h.supervisor.state(spec.name)).running, false);
      await h.supervisor.run(spec);
      const s = await h.supervisor.state(spec.name);
      assert.equal(s.running, true);
      assert.equal(s.hash, spec.hash);
      await h.supervisor.stop(spec.name);
    });

    it('keeps a component that runs the spec asked for, and restarts one on another', async () => {
      const h = await fresh();
      const one = h.spec('kube-scheduler', 'one');
      await h.supervisor.run(one);
      const first = await h.supervisor.state(one.name);
      await h.supervisor.run(one);
      assert.deepEqual(await h.supervisor.state(one.name), first, 'kept as it was');
      const two = h.spec('kube-scheduler', 'two');
      assert.notEqual(two.hash, one.hash);
      await h.supervisor.run(two);
      const second = await h.supervisor.state(one.name);
      assert.equal(second.running, true);
      assert.equal(second.hash, two.hash);
      await h.supervisor.stop(one.name);
    });

    it('stops level-triggered: stopping a stopped component succeeds', async () => {
      const h = await fresh();
      const spec = h.spec('kube-controller-manager', 'one');
      await h.supervisor.stop(spec.name);
      await h.supervisor.run(spec);
      await h.supervisor.stop(spec.name);
      assert.equal((await h.supervisor.state(spec.name)).running, false);
      await h.supervisor.stop(spec.name);
      assert.equal((await h.supervisor.state(spec.name)).running, false);
    });
  });
}
