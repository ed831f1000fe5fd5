// SPDX-License-Identifier: Apache-2.0
import { Command } from 'commander';
import type { CommandContext } from '../../context.ts';
import { withOutputFlag } from '../../command-options.ts';

const collect = (value: string, previous: string[]): string[] => [...previous, value];

/**
 * `molt pki init|issue|dashboard-token|kubernetes`: the fleet CA and the node, operator and admin
 * certificates it signs, the dashboard's sign-in tokens, and a Kubernetes cluster's own PKI.
 */
export function pkiCommand(ctx: CommandContext): Command {
  const pki = new Command('pki').description(
    'fleet certificates for the mutual-TLS APIs, dashboard sign-in tokens, and a Kubernetes cluster’s PKI',
  );
  pki.addCommand(
    withOutputFlag(new Command('init'))
      .description('create a fleet CA (EC P-256, 10 years): ca.pem and ca.key (0600)')
      .requiredOption('--dir <dir>', 'directory for the CA; refused if it already holds one')
      .action(async (_opts, cmd: Command) => {
        const { runInit } = await import('./run.ts');
        await runInit(ctx, cmd.opts());
      }),
  );
  pki.addCommand(
    withOutputFlag(new Command('issue'))
      .description('issue <name>.pem and <name>.key signed by the fleet CA')
      .requiredOption('--ca-dir <dir>', 'directory holding ca.pem and ca.key')
      .requiredOption('--role <role>', 'node, operator or admin (subject O=molt:<role>)')
      .requiredOption('--name <name>', 'subject CN: the node name or the person/service')
      .option(
        '--san <name>',
        'extra subject alternative name, DNS name or IP (repeatable)',
        collect,
        [],
      )
      .option('--days <n>', 'validity in days', '365')
      .option('--out <dir>', 'where to write the files (default: the CA directory)')
      .option(
        '--context <name>',
        'also store a context of the CLI config with this certificate (current if none is)',
      )
      .option('--operator <url>', 'with --context: its operator (default: the context’s URL)')
      .action(async (_opts, cmd: Command) => {
        const { runIssue } = await import('./run.ts');
        await runIssue(ctx, cmd.opts());
      }),
  );
  pki.addCommand(
    withOutputFlag(new Command('dashboard-token'))
      .description(
        'make a dashboard sign-in token (printed once) and the operator config line with its sha256',
      )
      .requiredOption(
        '--name <name>',
        'the person: shown on the page, recorded as dashboard:<name>',
      )
      .requiredOption('--role <role>', 'viewer (reads), operator (acts) or admin (also forces)')
      .action(async (_opts, cmd: Command) => {
        const { runDashboardToken } = await import('./dashboard-token.ts');
        runDashboardToken(ctx, cmd.opts());
      }),
  );
  pki.addCommand(kubernetesPki(ctx));
  return pki;
}

/** `molt pki kubernetes`: make a cluster's PKI (`--out`), or check one (`--check`). */
function kubernetesPki(ctx: CommandContext): Command {
  return withOutputFlag(new Command('kubernetes'))
    .description(
      'make a Kubernetes cluster’s PKI, laid out as kubeadm’s /etc/kubernetes (CAs, API server, ' +
        'front proxy, service-account keys, admin/controller-manager/scheduler kubeconfigs, and ' +
        'the bootstrap token workers join with; every file 0600), or check one with --check',
    )
    .requiredOption('--cluster <name>', 'the cluster: named in its CAs, and checked by --check')
    .option('--out <dir>', 'where to write it (plays /etc/kubernetes; keys under pki/)')
    .option('--server <url>', 'with --out: the API server’s https:// URL in the kubeconfigs')
    .option(
      '--san <IP:addr|DNS:name>',
      'extra name of the API server’s certificate (repeatable); the --server host is added',
      collect,
      [],
    )
    .option('--service-cidr <cidr>', 'its first address is a SAN (default: 10.96.0.0/12)')
    .option('--dns-domain <domain>', 'the cluster’s DNS domain (default: cluster.local)')
    .option('--days <n>', 'validity of all but the CAs (10 years), in days (default: 365)')
    .option('--force', 'write into a non-empty --out, replacing the PKI files there')
    .option('--check <dir>', 'check the PKI in <dir> is whole, valid now and this cluster’s')
    .action(async (_opts, cmd: Command) => {
      const { runKubernetesPki } = await import('./kubernetes.ts');
      await runKubernetesPki(ctx, cmd.opts());
    });
}
