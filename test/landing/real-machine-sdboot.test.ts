// SPDX-License-Identifier: Apache-2.0
// The core real-machine scenarios (install, an upgrade through a real reboot, the fallback after a
// kernel panic) with systemd-boot, run at every landing by `.ci/run` beside `npm test`'s own
// files; the GRUB twin is test/integration/real-machine.test.ts, and every scenario with both
// bootloaders is `npm run test:vm`.
import { realMachineSuite } from '../vm/harness/suite.ts';

realMachineSuite('systemd-boot', 'core');
