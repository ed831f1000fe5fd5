// SPDX-License-Identifier: Apache-2.0
/**
 * The installer image's config labels: its version and, for lab images, how the slot behaves when
 * booted (docs/adr/0004 §2). Unknown `dev.molt.lab.*` keys are refused rather than ignored, so a
 * typo in a test image does not silently turn a "fails to boot" image into a good one.
 */
import { valid } from 'semver';
import { ErrorCode, MoltError } from '../errors.ts';
import { ReleaseLabel } from '../releases/release.ts';
import type { LabBehaviour } from './slot.ts';

export const InstallerLabel = {
  /** The version the slot will run; falls back to `org.opencontainers.image.version`. */
  Version: 'dev.molt.version',
  /** `ok` (default) or `fail`: the lab firmware treats the slot as failing to boot. */
  LabBoot: 'dev.molt.lab.boot',
  /** `ok` (default) or `never`: the slot boots but never passes its health checks. */
  LabHealth: 'dev.molt.lab.health',
} as const;

export interface InstallerMetadata {
  readonly version: string;
  readonly lab?: LabBehaviour;
}

const labPrefix = 'dev.molt.lab.';

function invalid(message: string, hint: string): MoltError {
  return new MoltError(ErrorCode.ImageInvalid, message, { hint });
}

function versionOf(labels: Readonly<Record<string, string>>): string {
  const version = labels[InstallerLabel.Version] ?? labels[ReleaseLabel.Version];
  const hint = `label the image config with ${InstallerLabel.Version}=<semver>, e.g. 1.9.0`;
  if (version === undefined)
    throw invalid(`the image has no ${InstallerLabel.Version} label`, hint);
  if (valid(version.replace(/^v/, '')) === null)
    throw invalid(`label ${InstallerLabel.Version} "${version}" is not a semantic version`, hint);
  return version;
}

function labValue<T extends string>(
  labels: Readonly<Record<string, string>>,
  key: string,
  values: readonly T[],
): T {
  const value = labels[key] ?? 'ok';
  if ((values as readonly string[]).includes(value)) return value as T;
  throw invalid(`label ${key} is "${value}"`, `${key} is one of ${values.join(', ')}`);
}

/** Version and lab behaviour from `config.Labels`; throws `MOLT_IMAGE_INVALID`. */
export function installerMetadata(labels: Readonly<Record<string, string>>): InstallerMetadata {
  const version = versionOf(labels);
  const known: readonly string[] = [InstallerLabel.LabBoot, InstallerLabel.LabHealth];
  const unknown = Object.keys(labels).find((k) => k.startsWith(labPrefix) && !known.includes(k));
  if (unknown !== undefined)
    throw invalid(`unknown lab label ${unknown}`, `lab labels are ${known.join(', ')}`);
  if (!Object.keys(labels).some((k) => known.includes(k))) return { version };
  const boot = labValue(labels, InstallerLabel.LabBoot, ['ok', 'fail'] as const);
  const health = labValue(labels, InstallerLabel.LabHealth, ['ok', 'never'] as const);
  return { version, lab: { boot, health } };
}
