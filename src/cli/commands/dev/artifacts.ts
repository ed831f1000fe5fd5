// SPDX-License-Identifier: Apache-2.0
/**
 * `molt dev publish --artifact name=file`: installer artifacts as raw layers
 * (`application/vnd.dev.molt.artifact.v1`, titled by name; docs/adr/0004 §2). Names and files
 * are checked before anything is pushed, so a typo never publishes a half-valid installer.
 */
import { readFile } from 'node:fs/promises';
import { ErrorCode, MoltError } from '../../../protocol/index.ts';
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
