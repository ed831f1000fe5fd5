// SPDX-License-Identifier: Apache-2.0
/**
 * Which Kubernetes versions a cluster may move to (docs/adr/0012 §4–5), judged per running
 * component — a half-upgraded cluster runs two minors, and each binary must be allowed the move:
 *
 * | target minor T vs the binary's minor B | verdict |
 * |---|---|
 * | T = B (a patch up or down) | allowed |
 * | T = B + 1 | allowed, run with `--emulated-version=<B>` until finalized; refused (skew) while the component still emulates an older minor: finalize first |
 * | T = B − 1 | allowed only inside the KEP-4330 window: the component emulates T (not finalized); else `MOLT_KUBE_DOWNGRADE_WINDOW` with the reason |
 * | T > B + 1, T < B − 1 | `MOLT_KUBE_VERSION_SKEW` (a skipped minor; a downgrade past the window) |
 *
 * Unlike `talosctl upgrade-k8s` (no minor downgrade at all), a minor upgrade stays reversible until
 * a person finalizes it, because the new binaries keep behaving as the old minor.
 */
import { ErrorCode } from '../errors.ts';
import type { ControlPlaneMachine, KubeFrom, RunningComponent } from './types.ts';
import { compareKubeVersions, minorNumber, minorOf, parseKubeVersion } from './version.ts';

/** How the cluster moves. */
export type KubeMove =
  'same' | 'patch-upgrade' | 'patch-downgrade' | 'minor-upgrade' | 'minor-rollback';

export type PathVerdict =
  | {
      readonly ok: true;
      readonly move: KubeMove;
      readonly from: KubeFrom;
      /** The emulation the target runs with (absent: none). */
      readonly emulatedVersion?: string;
    }
  | {
      readonly ok: false;
      readonly code: typeof ErrorCode.KubeVersionSkew | typeof ErrorCode.KubeDowngradeWindow;
      readonly reason: string;
      readonly hint?: string;
    };

type Refusal = Extract<PathVerdict, { ok: false }>;

const skew = (reason: string, hint?: string): Refusal => ({
  ok: false,
  code: ErrorCode.KubeVersionSkew,
  reason,
  ...(hint !== undefined && { hint }),
});

/** The components with a known version. */
function running(machines: readonly ControlPlaneMachine[]): RunningComponent[] {
  return machines.flatMap((m) => m.components.filter((c) => c.version !== undefined));
}

/** The cluster's current version (the lowest running) and emulation (the lowest emulated). */
export function clusterFrom(machines: readonly ControlPlaneMachine[]): KubeFrom | undefined {
  const all = running(machines);
  const versions = all.map((c) => c.version ?? '').sort(compareKubeVersions);
  const lowest = versions[0];
  if (lowest === undefined) return undefined;
  const emulated = all
    .map((c) => c.emulatedVersion)
    .filter((e): e is string => e !== undefined)
    .sort((a, b) => minorNumber(a) - minorNumber(b))[0];
  return { version: lowest, ...(emulated !== undefined && { emulatedVersion: emulated }) };
}

/** One component's verdict on moving to `target`; undefined when it may. */
function componentRefusal(c: RunningComponent, target: string, where: string): Refusal | undefined {
  const version = c.version ?? target;
  const b = parseKubeVersion(version).minor;
  const t = parseKubeVersion(target).minor;
  const who = `${c.name} on ${where} runs ${version}`;
  if (t > b + 1)
    return skew(
      `${who}: ${target} skips a minor; upgrade one minor at a time (to ${minorOf(version)}'s next minor first)`,
    );
  if (t === b + 1 && c.emulatedVersion !== undefined && minorNumber(c.emulatedVersion) < b)
    return skew(
      `${who} still emulating ${c.emulatedVersion}: finalize that upgrade before the next minor`,
      'molt cluster kubernetes finalize',
    );
  if (t < b - 1)
    return skew(
      `${who}: ${target} is more than one minor back; Kubernetes does not downgrade that far`,
    );
  if (t === b - 1 && c.emulatedVersion !== minorOf(target))
    return {
      ok: false,
      code: ErrorCode.KubeDowngradeWindow,
      reason:
        c.emulatedVersion === undefined
          ? `${who} without --emulated-version (finalized): its data may already use ${minorOf(version)}'s formats, so it cannot go back to ${minorOf(target)}`
          : `${who} emulating ${c.emulatedVersion}, not ${minorOf(target)}: only a rollback to the emulated minor is safe`,
      hint: 'a minor rollback is possible only before `molt cluster kubernetes finalize`; a patch of the current minor is',
    };
  return undefined;
}

function moveOf(from: KubeFrom, target: string, highest: string): KubeMove {
  const t = parseKubeVersion(target).minor;
  if (t > parseKubeVersion(from.version).minor) return 'minor-upgrade';
  if (t < parseKubeVersion(highest).minor) return 'minor-rollback';
  const byLowest = compareKubeVersions(target, from.version);
  if (byLowest > 0) return 'patch-upgrade';
  if (compareKubeVersions(target, highest) < 0) return 'patch-downgrade';
  return 'same';
}

/** Whether the cluster's control plane may move to `target`, and how. */
export function checkPath(machines: readonly ControlPlaneMachine[], target: string): PathVerdict {
  parseKubeVersion(target);
  const from = clusterFrom(machines);
  if (from === undefined)
    return skew('no control-plane machine reports the version it runs', 'check the agents');
  for (const m of machines)
    for (const c of m.components) {
      const refused = componentRefusal(c, target, m.id);
      if (refused !== undefined) return refused;
    }
  const highest =
    running(machines)
      .map((c) => c.version ?? '')
      .sort(compareKubeVersions)
      .at(-1) ?? from.version;
  const move = moveOf(from, target, highest);
  const emulatedVersion =
    move === 'minor-upgrade'
      ? minorOf(from.version)
      : move === 'minor-rollback'
        ? undefined
        : from.emulatedVersion;
  return { ok: true, move, from, ...(emulatedVersion !== undefined && { emulatedVersion }) };
}
