// SPDX-License-Identifier: Apache-2.0
/**
 * `molt node service …` and `molt node etcd …` (docs/adr/0012 §6): one machine's services and
 * etcd member through its agent, for a cluster whose Kubernetes is down. The machine is the last
 * argument (by name, through the operator) or `--endpoint`.
 */
import { Command } from 'commander';
import type { CommandContext } from '../../context.ts';
import { lazy, withAgentFlags } from './command-kit.ts';

/** The action of a command whose first argument is `key` (a service, a member id), then the machine. */
const withFirst =
  (ctx: CommandContext, key: string, pick: Parameters<typeof lazy>[1]) =>
  async (...args: unknown[]): Promise<void> => {
    const [first, ...rest] = args;
    await lazy(ctx, (m) => (c, raw) => pick(m)(c, { ...raw, [key]: first }))(...rest);
  };

export function serviceCommand(ctx: CommandContext): Command {
  const service = new Command('service').description(
    'the machine’s services one by one: etcd, kube-apiserver, … (changes: admin only)',
  );
  service.addCommand(
    withAgentFlags(new Command('list'))
      .description('every service, running or not, with its PID')
      .action(lazy(ctx, (m) => m.runServiceList)),
  );
  for (const [action, what] of [
    ['start', 'start one service (a running one stays)'],
    ['stop', 'stop one service (a stopped one stays)'],
    ['restart', 'stop and start one service'],
  ] as const) {
    service.addCommand(
      withAgentFlags(new Command(action).argument('<name>', 'the service (molt node service list)'))
        .description(what)
        .action(withFirst(ctx, 'service', (m) => (c, raw) => m.runServiceAction(c, action, raw))),
    );
  }
  return service;
}

export function etcdCommand(ctx: CommandContext): Command {
  const etcd = new Command('etcd').description(
    'the machine’s etcd member: members, snapshot, leadership, membership (changes: admin only)',
  );
  etcd.addCommand(
    withAgentFlags(new Command('members'))
      .description('the members as this machine’s member sees them, leader and learners marked')
      .action(lazy(ctx, (m) => m.runEtcdMembers)),
  );
  etcd.addCommand(
    withAgentFlags(new Command('snapshot'), { output: false })
      .description('save a snapshot of the cluster’s data to a file (it holds every Secret)')
      .option('--output <file>', 'the file to write (mode 0600)')
      .action(lazy(ctx, (m) => m.runEtcdSnapshot)),
  );
  etcd.addCommand(
    withAgentFlags(new Command('forfeit-leadership'))
      .description('hand leadership to another voter when this member leads')
      .option('--to <id>', 'the member to lead (default: the most caught-up voter)')
      .action(lazy(ctx, (m) => m.runEtcdForfeit)),
  );
  etcd.addCommand(
    withAgentFlags(new Command('rejoin'), { timeoutMs: 300_000 })
      .description(
        'stop etcd and the components, keep the data dir aside, join the live cluster as a new member',
      )
      .action(lazy(ctx, (m) => m.runEtcdRejoin)),
  );
  etcd.addCommand(
    withAgentFlags(new Command('remove-member').argument('<id>', 'hex member id (etcd members)'))
      .description('remove a member from the cluster (never the last voter)')
      .action(withFirst(ctx, 'id', (m) => m.runEtcdRemove)),
  );
  return etcd;
}
