// SPDX-License-Identifier: Apache-2.0
// The core of the real-machine scenarios (issue 15 §3: 1 and 2) in `npm test`: molt installs its
// OS release onto a disk, OVMF and the real GRUB boot it in QEMU, and the agent upgrades itself
// through a real reboot and commits the other slot. Every scenario, with both bootloaders, is in
// `npm run test:vm` (test/vm/). About 4½ minutes under TCG.
import { realMachineSuite } from '../vm/harness/suite.ts';

realMachineSuite('grub', 'core');
