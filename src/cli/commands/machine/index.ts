// SPDX-License-Identifier: Apache-2.0
import { Command } from 'commander';
import { lazyAction } from '../../command-options.ts';
import type { CommandContext } from '../../context.ts';
import { withOperatorFlags } from '../rollout/index.ts';
import type * as MachineRun from './run.ts';

type Run = (ctx: CommandContext, id: string, raw: Record<string, unknown>) => Promise<void>;
const lazy = (ctx: CommandContext, pick: (m: typeof MachineRun) => Run) =>
  lazyAction(
    () => import('./run.ts'),
    (m, id, flags) => pick(m)(ctx, id ?? '', flags),
  );

/** `molt machine list|hold|release|register|deregister`: the operator's machines and holds. */
export function machineCommand(ctx: CommandContext): Command {
  const machine = new Command('machine').description('machines the operator manages (mutual TLS)');
  machine.addCommand(
    withOperatorFlags(new Command('list'), { wide: true })
      .description('every machine: pool, role, version, what the operator last saw, hold')
      .option('--pool <name>', 'only the machines of this pool')
      .option('--role <role>', 'only control-plane or worker machines')
      .option('-l, --selector <labels>', 'only machines whose labels match: zone=a,tier!=edge')
      .option('-w, --watch', 'print the list again whenever it changes, until ctrl-C')
      .action(lazy(ctx, (m) => (c, _id, raw) => m.runList(c, raw))),
  );
  machine.addCommand(
    withOperatorFlags(new Command('hold'))
      .description('start no upgrade on the machine for a while (one in flight finishes)')
      .argument('<id>', 'the machine')
      .option('--reason <text>', 'why (required; shown in plans and the history)')
      .option('--for <duration>', 'how long: 30m, 2h, 1d')
      .option('--until <time>', 'until an ISO 8601 time with a zone')
      .action(lazy(ctx, (m) => m.runHold)),
  );
  machine.addCommand(
    withOperatorFlags(new Command('release'))
      .description('lift the machine’s hold')
      .argument('<id>', 'the machine')
      .action(lazy(ctx, (m) => m.runRelease)),
  );
  machine.addCommand(
    withOperatorFlags(new Command('register'))
      .description(
        'add a machine to the operator’s inventory (a node may register itself, as the operator’s selfRegistration rules allow)',
      )
      .argument('<id>', 'the machine (its node certificate’s name when it registers itself)')
      .option('--agent <url>', 'its agent’s API: https://host:port')
      .option('--pool <name>', 'the pool it joins')
      .option('--role <role>', 'worker or control-plane', 'worker')
      .option('--cluster <name>', 'its Kubernetes / etcd cluster')
      .option(
        '--label <key=value>',
        'a label (repeatable): zone=a',
        (v: string, all: readonly string[]) => [...all, v],
        [] as string[],
      )
      .action(lazy(ctx, (m) => m.runRegister)),
  );
  machine.addCommand(
    withOperatorFlags(new Command('deregister'))
      .description('remove a machine that registered through the API')
      .argument('<id>', 'the machine')
      .action(lazy(ctx, (m) => m.runDeregister)),
  );
  return machine;
}
