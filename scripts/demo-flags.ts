// SPDX-License-Identifier: Apache-2.0
// `npm run demo -- …`'s flags, every one checked before the demo touches anything: an unknown flag
// or a bad --network once came out as a Node stack trace, and --network bogus only after the demo
// had stopped the lab already running.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ErrorCode, MoltError } from '../src/core/errors.ts';
import { chooseNetworkMode, parseNetworkFlag, type NetworkMode } from '../src/lab/fleet/network.ts';

export interface DemoFlags {
  readonly fast: boolean;
  readonly down: boolean;
  readonly kubernetes: boolean;
  readonly basics: boolean;
  readonly vm: boolean;
  /** With `vm`: the operator as pods on the VM nodes. */
  readonly cluster: boolean;
  /** The lab directory, absolute. @default .molt/lab */
  readonly dir: string;
  readonly network: NetworkMode;
}

const usage =
  'npm run demo -- [--fast] [--down] [--no-kubernetes] [--network auto|netns|loopback] [--dir DIR] [--basics | --vm [--cluster]]';

/** The demo's flags from `argv`; MOLT_BAD_FLAG for anything it does not take. */
export async function parseDemoFlags(argv: readonly string[]): Promise<DemoFlags> {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        fast: { type: 'boolean', default: false },
        down: { type: 'boolean', default: false },
        'no-kubernetes': { type: 'boolean', default: false },
        basics: { type: 'boolean', default: false },
        vm: { type: 'boolean', default: false },
        cluster: { type: 'boolean', default: false },
        dir: { type: 'string' },
        network: { type: 'string', default: 'auto' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    throw new MoltError(ErrorCode.BadFlag, (e as Error).message, { hint: usage });
  }
  if (values.basics && values.vm)
    throw new MoltError(ErrorCode.BadFlag, 'give --basics or --vm, not both', { hint: usage });
  if (values.cluster && (!values.vm || values['no-kubernetes']))
    throw new MoltError(
      ErrorCode.BadFlag,
      '--cluster runs the operator on VM nodes: it needs --vm, with Kubernetes',
      { hint: usage },
    );
  const network = await chooseNetworkMode(parseNetworkFlag(values.network)).catch((e: unknown) => {
    throw e instanceof MoltError && e.hint === undefined
      ? new MoltError(e.code, e.message, { hint: usage })
      : e;
  });
  return {
    fast: values.fast,
    down: values.down,
    kubernetes: !values['no-kubernetes'],
    basics: values.basics,
    vm: values.vm,
    cluster: values.cluster,
    dir: resolve(values.dir ?? '.molt/lab'),
    network,
  };
}
