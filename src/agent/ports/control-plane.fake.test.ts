// SPDX-License-Identifier: Apache-2.0
import { createHash } from 'node:crypto';
import { renderComponent } from '../../core/kubernetes/render.ts';
import { componentSupervisorConformance } from '../../testkit/component-supervisor-conformance.ts';
import { createFakeSupervisor } from './control-plane.fake.ts';

const sha256 = (t: string): string => createHash('sha256').update(t).digest('hex');

componentSupervisorConformance('FakeSupervisor', () =>
  Promise.resolve({
    supervisor: createFakeSupervisor(),
    spec: (name, variant) =>
      renderComponent({
        name,
        facts: { args: [`--v=${variant}`], port: 1, env: {} },
        binDir: '/bin',
        sha256,
      }),
    close: () => Promise.resolve(),
  }),
);
