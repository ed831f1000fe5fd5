// SPDX-License-Identifier: Apache-2.0
// Every real-machine scenario (issue 15 §3) with systemd-boot: see harness/suite.ts. `npm run test:vm`.
import { realMachineSuite } from './harness/suite.ts';

realMachineSuite('systemd-boot', 'all');
