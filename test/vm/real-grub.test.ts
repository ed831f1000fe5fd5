// SPDX-License-Identifier: Apache-2.0
// Every real-machine scenario (docs/real-machines.md) with GRUB: see harness/suite.ts. `npm run test:vm`.
import { realMachineSuite } from './harness/suite.ts';

realMachineSuite('grub', 'all');
