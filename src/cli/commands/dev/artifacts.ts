// SPDX-License-Identifier: Apache-2.0
/**
 * `molt dev publish --artifact name=file`: installer artifacts as raw layers
 * (`application/vnd.dev.molt.artifact.v1`, titled by name; docs/adr/0004 §2). Names and files
 * are checked before anything is pushed, so a typo never publishes a half-valid installer.
 * `--dir DIR` takes the artifacts `molt image build --out DIR` wrote, its version and the labels
 * of its node runtime (`molt.dev/kubelet-version`, `molt.dev/containerd-version`).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { ErrorCode, MoltError, imageLabels } from '../../../protocol/index.ts';
import { ArtifactName } from '../../../core/slots/slot.ts';
import {
  ArtifactMediaType,
  InstallerLabel,
  isArtifactName,
  TitleAnnotation,
} from '../../../core/slots/contract.ts';
import type { LayerInput } from '../../../oci/index.ts';

const split = (spec: string): [string, string] => [
  spec.slice(0, spec.indexOf('=')),
  spec.slice(spec.indexOf('=') + 1),
];

/** The `dev.molt.version` label for an installer with artifacts (the contract requires it). */
export function installerLabels(
  specs: readonly string[],
  version: string | undefined,
): Record<string, string> {
  if (specs.length === 0) return {};
  if (version === undefined)
    throw new MoltError(ErrorCode.BadFlag, '--version is required with --artifact', {
      hint: 'agents refuse installer images without a dev.molt.version label',
    });
  return { [InstallerLabel.Version]: version };
}

/** Read each `name=file` into a raw artifact layer. */
export async function readArtifacts(specs: readonly string[]): Promise<LayerInput[]> {
  const seen = new Set<string>();
  const checked = specs.map((spec) => {
    const [name, path] = split(spec);
    if (!isArtifactName(name))
      throw new MoltError(
        ErrorCode.BadFlag,
        `--artifact ${spec}: "${name}" is not an installer artifact`,
        {
          hint: 'artifacts are vmlinuz, initrd.img, rootfs.img and cmdline',
        },
      );
    if (seen.has(name)) throw new MoltError(ErrorCode.BadFlag, `--artifact ${name} is given twice`);
    seen.add(name);
    return [name, path] as const;
  });
  const layers: LayerInput[] = [];
  for (const [name, path] of checked) {
    let bytes: Uint8Array;
    try {
      bytes = new Uint8Array(await readFile(path));
    } catch (e) {
      throw new MoltError(ErrorCode.BadFlag, `--artifact ${name}=${path}: cannot read the file`, {
        cause: e,
      });
    }
    layers.push({ mediaType: ArtifactMediaType, bytes, annotations: { [TitleAnnotation]: name } });
  }
  return layers;
}

/** The part of `image.json` publishing reads. */
const ImageJson = z.object({ version: z.string().min(1) });

/** What `--dir DIR` contributes to a publish. */
export interface DirArtifacts {
  readonly specs: string[];
  /** The version its `image.json` names, if it has one. */
  readonly version: string | undefined;
  /** Labels its `image.json` implies: the node runtime's versions (kubelet, containerd). */
  readonly labels: Record<string, string>;
}

/**
 * `--dir DIR`: an `--artifact` spec for each installer artifact in DIR, and the version and node
 * runtime its `image.json` names (if it has one). A directory without a kernel is refused.
 */
export async function dirArtifacts(dir: string): Promise<DirArtifacts> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (e) {
    throw new MoltError(ErrorCode.BadFlag, `--dir ${dir}: cannot read the directory`, {
      cause: e,
    });
  }
  const specs = Object.values(ArtifactName)
    .filter((name) => names.includes(name))
    .map((name) => `${name}=${join(dir, name)}`);
  if (!names.includes(ArtifactName.Kernel) || !names.includes(ArtifactName.Rootfs))
    throw new MoltError(ErrorCode.BadFlag, `--dir ${dir} has no vmlinuz and rootfs.img`, {
      hint: 'give the --out directory of `molt image build`',
    });
  if (!names.includes('image.json')) return { specs, version: undefined, labels: {} };
  let json: unknown;
  try {
    json = JSON.parse(await readFile(join(dir, 'image.json'), 'utf8'));
  } catch (e) {
    throw new MoltError(ErrorCode.BadFlag, `--dir ${dir}: image.json is not JSON`, { cause: e });
  }
  const parsed = ImageJson.safeParse(json);
  if (!parsed.success)
    throw new MoltError(ErrorCode.BadFlag, `--dir ${dir}: image.json names no version`);
  let labels: Record<string, string>;
  try {
    labels = imageLabels(json, `--dir ${dir}: image.json`);
  } catch (e) {
    if (!(e instanceof MoltError)) throw e;
    throw new MoltError(ErrorCode.BadFlag, e.message, {
      cause: e,
      ...(e.hint !== undefined && { hint: e.hint }),
    });
  }
  return { specs, version: parsed.data.version, labels };
}

/**
 * Flags with `--dir`'s artifacts added in front of `--artifact`'s, its version as default, and its
 * labels in front of `--label`'s (so a `--label` given for the same key wins).
 */
export async function withDirArtifacts<
  T extends {
    dir?: string | undefined;
    artifact: string[];
    label: string[];
    version?: string | undefined;
  },
>(flags: T): Promise<T> {
  if (flags.dir === undefined) return flags;
  const fromDir = await dirArtifacts(flags.dir);
  const version = flags.version ?? fromDir.version;
  return {
    ...flags,
    artifact: [...fromDir.specs, ...flags.artifact],
    label: [...Object.entries(fromDir.labels).map(([k, v]) => `${k}=${v}`), ...flags.label],
    ...(version !== undefined && { version }),
  };
}
