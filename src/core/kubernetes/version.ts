// SPDX-License-Identifier: Apache-2.0
/**
 * Kubernetes versions as the plan compares them: `v1.36.3` (what `/version` reports and release
 * tags use) and minors `1.36` (what `--emulated-version` takes). Vendor suffixes
 * (`v1.30.1-eks-1234`) are ignored: the plan works on MAJOR.MINOR.PATCH.
 */
import { ErrorCode, MoltError } from '../errors.ts';

export interface KubeVersionParts {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
}

const versionRe = /^v?(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?:[-+].*)?$/;
const minorRe = /^(\d{1,3})\.(\d{1,3})$/;

/** `v1.36.3` → parts; `MOLT_INVALID_VERSION` for anything else. */
export function parseKubeVersion(text: string): KubeVersionParts {
  const m = versionRe.exec(text.trim());
  if (m === null)
    throw new MoltError(ErrorCode.InvalidVersion, `"${text}" is not a Kubernetes version`, {
      hint: 'give a version like v1.36.3',
    });
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]) };
}

/** Whether {@link parseKubeVersion} takes `text`. */
export function isKubeVersion(text: string): boolean {
  return versionRe.test(text.trim());
}

/** `1.35` → parts (patch 0); `MOLT_INVALID_VERSION` for anything else. */
export function parseKubeMinor(text: string): KubeVersionParts {
  const m = minorRe.exec(text.trim());
  if (m === null)
    throw new MoltError(ErrorCode.InvalidVersion, `"${text}" is not a Kubernetes minor`, {
      hint: 'give a minor like 1.35',
    });
  return { major: Number(m[1]), minor: Number(m[2]), patch: 0 };
}

/** The minor of a version: `v1.36.3` → `1.36`. */
export function minorOf(version: string): string {
  const v = parseKubeVersion(version);
  return `${String(v.major)}.${String(v.minor)}`;
}

/** Negative, 0 or positive as `a` is older, the same or newer than `b` (MAJOR.MINOR.PATCH). */
export function compareKubeVersions(a: string, b: string): number {
  const x = parseKubeVersion(a);
  const y = parseKubeVersion(b);
  return x.major - y.major || x.minor - y.minor || x.patch - y.patch;
}

/** How many minors `b` is ahead of `a` (negative: behind); both of major 1. */
export function minorDistance(a: string, b: string): number {
  const x = parseKubeVersion(a);
  const y = parseKubeVersion(b);
  return (y.major - x.major) * 1000 + (y.minor - x.minor);
}

/** The minor as a number, for a version (`v1.36.3`) or a minor (`1.35`). */
export function minorNumber(versionOrMinor: string): number {
  return minorRe.test(versionOrMinor.trim())
    ? parseKubeMinor(versionOrMinor).minor
    : parseKubeVersion(versionOrMinor).minor;
}

/**
 * How far back a binary may emulate (KEP-4330): the binaries molt builds accept
 * `--emulated-version` from three minors back to their own (`kube=1.33..1.36` for 1.36).
 */
export const EMULATION_WINDOW_MINORS = 3;

/** Whether a binary of `version` accepts `--emulated-version=<emulated>`. */
export function emulationAllowed(version: string, emulated: string): boolean {
  const binary = parseKubeVersion(version);
  const e = parseKubeMinor(emulated);
  return (
    e.major === binary.major &&
    e.minor <= binary.minor &&
    e.minor >= binary.minor - EMULATION_WINDOW_MINORS
  );
}
