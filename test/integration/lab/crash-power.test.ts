// SPDX-License-Identifier: Apache-2.0
// The lab's power cut at the phases where a half-done step would hurt, on a lab machine booting
// with systemd-boot: see crash-matrix.ts.
import { crashMatrix, powerCuts } from './crash-matrix.ts';

crashMatrix('systemd-boot', powerCuts);
