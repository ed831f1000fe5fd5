// SPDX-License-Identifier: Apache-2.0
/**
 * `molt node service list|start|stop|restart` and `molt node logs --service NAME`: one machine's
 * services through its agent, with Kubernetes down (docs/adr/0012 §6). Changes need an admin
 * certificate; the agent refuses others.
 */
import { z } from 'zod';
import { MaxLogTail } from '../../../protocol/agent-kubernetes.ts';
import type { CommandContext } from '../../context.ts';
import { parseFlags } from '../../flags.ts';
import { renderData, renderTable } from '../../output.ts';
import { untilInterrupted } from '../../watch.ts';
import { withRecovery } from './recovery-connection.ts';
import { serviceColumns, serviceLine } from './recovery-render.ts';

/** `molt node service list`. */
export function runServiceList(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  return withRecovery(ctx, raw, async ({ client, output }) => {
    const services = await client.kube.services();
    ctx.io.out(
      output === 'table' ? renderTable(serviceColumns, services) : renderData(output, services),
    );
  });
}

const serviceName = z
  .string()
  .min(1, 'is empty')
  .max(253)
  .regex(/^[a-z0-9][a-z0-9.@_-]*$/, 'must be a service name like kube-apiserver');

/** `molt node service start|stop|restart NAME`. */
export function runServiceAction(
  ctx: CommandContext,
  action: 'start' | 'stop' | 'restart',
  raw: Record<string, unknown>,
): Promise<void> {
  const { service } = parseFlags(z.object({ service: serviceName }), raw);
  return withRecovery(ctx, raw, async ({ client, output }) => {
    const calls = {
      start: () => client.kube.startService(service),
      stop: () => client.kube.stopService(service),
      restart: () => client.kube.restartService(service),
    } as const;
    const view = await calls[action]();
    ctx.io.out(output === 'table' ? `${serviceLine(view)}\n` : renderData(output, view));
  });
}

/** `molt node logs --service NAME [--tail N] [--follow]`: the service's own output, as lines. */
export function runServiceLogs(ctx: CommandContext, raw: Record<string, unknown>): Promise<void> {
  const o = parseFlags(
    z.object({
      service: serviceName,
      follow: z.boolean().default(false),
      tail: z.coerce
        .number({ message: 'must be a number' })
        .int()
        .min(0)
        .max(MaxLogTail, `is at most ${String(MaxLogTail)} lines`)
        .optional(),
    }),
    raw,
  );
  return withRecovery(
    ctx,
    raw,
    async ({ client, abort }) => {
      const print = async (signal?: AbortSignal): Promise<void> => {
        for await (const line of client.bytes.serviceLogs(o.service, {
          follow: o.follow,
          ...(o.tail !== undefined && { tail: o.tail }),
        })) {
          if (signal?.aborted === true) return;
          ctx.io.out(`${line}\n`);
        }
      };
      // Following runs until ctrl-C, which ends it with exit 0 and drops the connection.
      await (o.follow ? untilInterrupted(ctx, print, abort) : print());
    },
    { quietStreams: o.follow },
  );
}
