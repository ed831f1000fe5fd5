// SPDX-License-Identifier: Apache-2.0
/**
 * The flags of `molt image build --operator`, checked before anything is built: an OS image's
 * flag, a missing destination or a bad reference is a `MOLT_BAD_FLAG` (or
 * `MOLT_INVALID_REFERENCE`) with a hint, and nothing is written.
 */
import { parseArgs } from 'node:util';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { parseImageReference, type ImageReference } from '../../core/slots/reference.ts';
import { optionLines, parseOptions } from '../../protocol/flags.ts';
import { ImageBuildFlags, OperatorImageFlags } from '../../protocol/process-flags/image.ts';

export interface OperatorBuildOptions {
  /** The OCI image layout directory to write. */
  readonly out?: string;
  /** Where to push (`host[:port]/repository[:tag]`). */
  readonly push?: ImageReference;
  /** Plain HTTP to the `--push` registry (loopback registries). */
  readonly insecure: boolean;
  /** The layout's `org.opencontainers.image.ref.name`; default: the push tag, else molt's version. */
  readonly tag?: string;
  readonly moltPackage?: string;
  readonly node?: string;
  readonly mirrors: readonly string[];
  readonly cache: string;
  readonly source?: string;
  readonly revision?: string;
  readonly noCache: boolean;
  readonly json: boolean;
  readonly verbose: boolean;
}

/** The usage lines of `--operator`, part of `molt image build --help`. */
export const operatorUsage = `Operator image: molt image build --operator (--out DIR | --push REF) [options]

Builds the molt operator as an OCI container image (linux/amd64): Debian bookworm's libc6,
libstdc++6, libgcc-s1, CA certificates and time zones, Node 24 and this molt, running
\`molt operator --config /etc/molt/config/operator.yaml\` as uid 65532 (deploy/kubernetes,
docs/adr/0017). No Docker: the layers are written by molt and pushed by its own OCI client.

${optionLines(OperatorImageFlags)}
`;

function bad(message: string, hint?: string): MoltError {
  return new MoltError(ErrorCode.BadFlag, message, {
    hint: hint ?? 'molt image build --help shows the flags (Operator image)',
  });
}

/** Flags of the OS image that mean nothing for a container image. */
const osOnly: readonly string[] = Object.keys(ImageBuildFlags).filter(
  (name) => !Object.hasOwn(OperatorImageFlags, name),
);

function refuseOsFlags(argv: readonly string[]): void {
  for (const arg of argv) {
    const name = /^--([a-z-]+)(=|$)/.exec(arg)?.[1];
    if (name !== undefined && osOnly.includes(name))
      throw bad(
        `--${name} is a flag of OS images, not of --operator`,
        name === 'version'
          ? "the operator image's version is the version of the molt it carries"
          : undefined,
      );
  }
}

function pushReference(ref: string | undefined): { push?: ImageReference } {
  if (ref === undefined) return {};
  const parsed = parseImageReference(ref);
  if (parsed.digest !== undefined)
    throw bad(`--push ${ref} names a digest`, 'push to a tag: host[:port]/repository[:tag]');
  return { push: parsed };
}

/** Parse and check the flags of `--operator`; `null` means `--help`. */
export function parseOperatorOptions(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): OperatorBuildOptions | null {
  refuseOsFlags(argv);
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: parseOptions(OperatorImageFlags),
      strict: true,
      allowPositionals: false,
    });
  } catch (error) {
    throw bad((error as Error).message);
  }
  const v = parsed.values;
  if (v.help) return null;
  checkValues(v);
  return {
    ...(v.out !== undefined && { out: v.out }),
    ...pushReference(v.push),
    insecure: v.insecure,
    ...defined({ tag: v.tag, source: v.source, revision: v.revision }),
    ...defined({ moltPackage: v['molt-package'], node: v.node }),
    mirrors: v.mirror,
    cache: v.cache ?? env['MOLT_IMAGE_CACHE'] ?? '.molt/images',
    noCache: v['no-cache'],
    json: v.json,
    verbose: v.verbose,
  };
}

/** `o` without its undefined members (the options are exactOptionalPropertyTypes). */
function defined<T extends Record<string, string | undefined>>(o: T): { [K in keyof T]?: string } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]?: string;
  };
}

interface Values {
  readonly out?: string | undefined;
  readonly push?: string | undefined;
  readonly insecure: boolean;
  readonly tag?: string | undefined;
  readonly source?: string | undefined;
  readonly revision?: string | undefined;
}

function checkValues(v: Values): void {
  if (v.out === undefined && v.push === undefined)
    throw bad('--operator needs --out DIR, --push REF or both');
  if (v.out === '') throw bad('--out needs a directory');
  if (v.tag !== undefined && !/^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$/.test(v.tag))
    throw bad(
      `--tag ${v.tag} is not an image tag`,
      'a tag is [A-Za-z0-9_.-], at most 128 characters',
    );
  if (v.revision !== undefined && !/^[0-9a-f]{7,64}$/.test(v.revision))
    throw bad(
      `--revision ${v.revision} is not a commit id`,
      'give the hex commit id (git rev-parse HEAD)',
    );
  if (v.source !== undefined && !URL.canParse(v.source))
    throw bad(`--source ${v.source} is not a URL`, 'e.g. --source https://github.com/acme/molt');
  if (v.insecure && v.push === undefined) throw bad('--insecure applies to --push only');
}

/** Whether `argv` asks for the operator image. */
export const wantsOperator = (argv: readonly string[]): boolean => argv.includes('--operator');
