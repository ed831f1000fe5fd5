// SPDX-License-Identifier: Apache-2.0
// The agent killed (SIGKILL) before and after every phase of an upgrade, on a lab machine booting
// with GRUB: see crash-matrix.ts.
import { crashMatrix, kills } from './crash-matrix.ts';

crashMatrix('grub', kills);
