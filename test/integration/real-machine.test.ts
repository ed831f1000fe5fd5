// SPDX-License-Identifier: Apache-2.0
// The core of the real-machine scenarios in `npm test`: molt installs its OS release onto a disk,
// OVMF and the real GRUB boot it in QEMU, the agent upgrades itself through a real reboot and
// commits the other slot, and a release whose kernel panics falls back to it. The systemd-boot twin
// runs at every landing (test/landing/); every scenario, with both bootloaders, is in
// `npm run test:vm` (test/vm/).
import { realMachineSuite } from '../vm/harness/suite.ts';

realMachineSuite('grub', 'core');
