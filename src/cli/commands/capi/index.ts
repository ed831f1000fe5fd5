// SPDX-License-Identifier: Apache-2.0
import { Command } from 'commander';
import type { CommandContext } from '../../context.ts';

/** `molt capi extension-config`: what registers molt with Cluster API (docs/adr/0014). */
export function capiCommand(ctx: CommandContext): Command {
  const capi = new Command('capi').description('molt as a Cluster API in-place update extension');
  capi.addCommand(
    new Command('extension-config')
      .description(
        'print the ExtensionConfig that registers the operator’s Cluster API extension (kubectl apply -f -)',
      )
      .requiredOption(
        '--url <url>',
        'where the extension listens, as the operator printed it (https://host:port)',
      )
      .requiredOption('--ca <file>', 'the PEM CA that signed the listener’s certificate')
      .option('--name <name>', 'the ExtensionConfig’s name', 'molt')
      .action(async (opts: Record<string, unknown>) => {
        const { runExtensionConfig } = await import('./run.ts');
        await runExtensionConfig(ctx, opts);
      }),
  );
  return capi;
}
