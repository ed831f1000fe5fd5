// SPDX-License-Identifier: Apache-2.0
import { Command } from 'commander';
import type { CommandContext } from '../../context.ts';
import { withOutputFlag, withRegistryFlags } from '../../command-options.ts';

const collect = (value: string, previous: string[]): string[] => [...previous, value];

/** `molt dev …`: helpers for release engineers, tests and the demo. */
export function devCommand(ctx: CommandContext): Command {
  const dev = new Command('dev').description('release-engineering helpers');
  dev.addCommand(
    withOutputFlag(withRegistryFlags(new Command('publish')))
      .description(
        'build an installer image with release labels and push it under one or more tags',
      )
      .option('--tag <tag>', 'tag to push (repeatable; first is the primary)', collect, [])
      .option('--version <version>', 'org.opencontainers.image.version label')
      .option('--channels <list>', 'dev.molt.channels label, comma-separated (e.g. stable,beta)')
      .option('--official', 'set dev.molt.official=true')
      .option(
        '--kubernetes <range>',
        'dev.molt.kubernetes label: supported Kubernetes semver range',
      )
      .option(
        '--upgrade-from <range>',
        'dev.molt.upgrade-from label: versions that may upgrade directly',
      )
      .option('--created <rfc3339>', 'org.opencontainers.image.created (default: now)')
      .option('--label <key=value>', 'any other config label (repeatable)', collect, [])
      .option('--layer <file[:mediaType]>', 'add a file as a layer (repeatable)', collect, [])
      .option(
        '--artifact <name=file>',
        'add an installer artifact as a raw layer: vmlinuz, initrd.img, rootfs.img or cmdline (repeatable; sets dev.molt.version from --version)',
        collect,
        [],
      )
      .option(
        '--dir <dir>',
        'add the artifacts of `molt image build --out DIR` (vmlinuz, initrd.img, rootfs.img, cmdline); --version defaults to its image.json',
      )
      .option('--sign-key <file>', 'sign the release with this PEM private key')
      .option(
        '--sign-format <format>',
        'cosign-legacy (.sig tag) or sigstore-bundle (referrer)',
        'cosign-legacy',
      )
      .action(async (_opts, cmd: Command) => {
        const { runPublish } = await import('./publish.ts');
        await runPublish(ctx, cmd.opts());
      }),
  );
  dev.addCommand(
    withOutputFlag(withRegistryFlags(new Command('publish-kubernetes')))
      .description(
        'publish the control-plane binaries of one Kubernetes version as a Kubernetes bundle (an OCI artifact)',
      )
      .option('--version <version>', 'the Kubernetes version, e.g. v1.36.3 (the default tag)')
      .option(
        '--from <dir>',
        'directory of the binaries (default: scripts/ensure-kube-bins.sh <version>, built if missing)',
      )
      .option('--tag <tag>', 'tag to push (repeatable; default: the version)', collect, [])
      .option('--sign-key <file>', 'sign the bundle with this PEM private key (cosign .sig)')
      .action(async (_opts, cmd: Command) => {
        const { runPublishKubernetes } = await import('./publish-kubernetes.ts');
        await runPublishKubernetes(ctx, cmd.opts());
      }),
  );
  return dev;
}
