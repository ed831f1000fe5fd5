// SPDX-License-Identifier: Apache-2.0
/** Builders shared by the Kubernetes plan tests (no tests of its own). */
import { KubeComponents, type ControlPlaneMachine, type KubeTarget } from './types.ts';

/** A bundle reference by digest, for `version`. */
export const bundle = (version: string): string =>
  `127.0.0.1:5000/acme/installer-kubernetes@sha256:${version.replace(/\D/g, '').padEnd(64, '0')}`;

/** A machine running every component at `version` (emulating `emulated`). */
export function machine(
  id: string,
  version: string,
  o: { emulated?: string; bundle?: string | null } = {},
): ControlPlaneMachine {
  return {
    id,
    components: KubeComponents.map((name) => ({
      name,
      version,
      ...(o.bundle !== null && { bundle: o.bundle ?? bundle(version) }),
      ...(o.emulated !== undefined && { emulatedVersion: o.emulated }),
      healthy: true,
    })),
  };
}

/** Three control-plane machines at `version`. */
export const three = (version: string, o: { emulated?: string } = {}): ControlPlaneMachine[] =>
  ['cp-1', 'cp-2', 'cp-3'].map((id) => machine(id, version, o));

/** A target of `version`. */
export const target = (version: string, over: Partial<KubeTarget> = {}): KubeTarget => ({
  version,
  bundle: bundle(version),
  extraArgs: {},
  finalize: false,
  ...over,
});
