// SPDX-License-Identifier: Apache-2.0
/**
 * The agent's recovery routes (docs/adr/0012 §6, `protocol/agent-kubernetes.ts`): the machine's
 * services one by one, their logs, and etcd's members, snapshot, leadership, membership, restore
 * and rejoin — what brings a cluster back with Kubernetes down. Every GET is `read`; handing etcd
 * leadership over is `operate` (the operator's upgrade plans do it); everything else is `force`
 * (admin certificates only), checked before a body is read. Changes that stop
 * services or move data are refused while an upgrade operation runs (MOLT_AGENT_BUSY).
 */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { requirePermission, type Identity } from '../../platform/https/identity.ts';
import { parseInput } from '../../platform/https/input.ts';
import { RolePermissions } from '../../protocol/agent.ts';
import {
  ForfeitBody,
  KubernetesRoutes as R,
  MaxLogTail,
  MaxSnapshotBytes,
} from '../../protocol/agent-kubernetes.ts';
import type { EtcdRecovery } from '../ports/etcd-recovery.ts';
import type { ServiceControl } from '../ports/service-control.ts';
import type { AgentService } from './service.ts';
import { answerWhenDone } from './long-answer.ts';
import { receiveFile } from './upload.ts';

/** What the recovery routes reach; absent parts answer as a machine without them. */
export interface RecoveryDeps {
  readonly services?: ServiceControl | undefined;
  /** Control-plane machines only. */
  readonly etcd?: EtcdRecovery | undefined;
  /** Where uploads are staged (`<root>/state/tmp`). */
  readonly uploadDir?: string | undefined;
  /** @default MaxSnapshotBytes */
  readonly maxSnapshotBytes?: number;
}

const flag = z
  .enum(['true', 'false', '1', '0', ''])
  .transform((v) => v === 'true' || v === '1' || v === '');

/** Query of `GET /v1/services/:name/logs`. */
const ServiceLogsQuery = z
  .object({
    tail: z.coerce.number().int().min(0).max(MaxLogTail).default(100),
    follow: flag.default(false),
  })
  .strict();

/** The Fastify pattern of a route the protocol builds from a value (`/v1/services/:name/stop`). */
const pattern = (route: (value: string) => string, param = 'name'): string =>
  decodeURIComponent(route(`:${param}`));

const Name = z.object({ name: z.string().min(1).max(253) });
const Id = z.object({
  id: z
    .string()
    .regex(/^[0-9a-f]{1,16}$/i, 'must be a hex etcd member id (molt node etcd members)'),
});
const Empty = z.strictObject({});

/** Register the routes on `app`; `who` is the identity the app's hook found. */
export function registerRecoveryRoutes(
  app: FastifyInstance,
  deps: {
    readonly recovery: RecoveryDeps;
    readonly service: AgentService;
    readonly who: (request: FastifyRequest) => Identity;
  },
): void {
  const { recovery } = deps;
  const admin = { onRequest: adminOnly(deps.who) };
  const idle = () => assertIdle(deps.service);
  const services = (): ServiceControl => {
    if (recovery.services !== undefined) return recovery.services;
    throw new MoltError(ErrorCode.ServiceNotFound, 'this machine runs no services molt manages');
  };
  const name = (request: FastifyRequest): string =>
    parseInput(Name, request.params, 'service name').name;

  app.get(R.services, () => services().list());
  for (const [action, route] of [
    ['start', pattern(R.serviceStart)],
    ['stop', pattern(R.serviceStop)],
    ['restart', pattern(R.serviceRestart)],
  ] as const) {
    app.post(route, admin, async (request) => {
      parseInput(Empty, request.body ?? {}, `${action} request`);
      await idle();
      return services()[action](name(request));
    });
  }
  app.get(pattern(R.serviceLogs), async (request, reply) => {
    const q = parseInput(ServiceLogsQuery, request.query, 'logs query');
    const aborted = closeSignal(reply);
    const lines = await services().logs(name(request), { ...q, signal: aborted });
    return reply
      .type('text/plain; charset=utf-8')
      .header('cache-control', 'no-cache')
      .send(Readable.from(withNewlines(lines)));
  });
  registerEtcdRoutes(app, { ...deps, admin, idle });
}

function registerEtcdRoutes(
  app: FastifyInstance,
  deps: {
    readonly recovery: RecoveryDeps;
    readonly admin: { onRequest: (request: FastifyRequest) => Promise<void> };
    readonly idle: () => Promise<void>;
  },
): void {
  const { recovery, admin, idle } = deps;
  const etcd = (): EtcdRecovery => {
    if (recovery.etcd !== undefined) return recovery.etcd;
    throw new MoltError(ErrorCode.NotControlPlane, 'this machine runs no etcd member', {
      hint: 'ask a control-plane machine',
    });
  };
  app.get(R.etcdMembers, () => etcd().members());
  app.post(R.etcdSnapshot, admin, async (request, reply) => {
    parseInput(Empty, request.body ?? {}, 'snapshot request');
    const bytes = await etcd().snapshot(closeSignal(reply));
    return sendBytes(reply, bytes);
  });
  // Handing leadership over is part of every control-plane upgrade (the operator's Kubernetes
  // plans forfeit before they restart the leader's components): `operate`, not admin only.
  app.post(R.etcdForfeit, async (request) => {
    const body = parseInput(ForfeitBody, request.body ?? {}, 'forfeit request');
    return etcd().forfeitLeadership(body.to);
  });
  app.post(pattern(R.etcdRemove, 'id'), admin, async (request) => {
    parseInput(Empty, request.body ?? {}, 'remove request');
    await idle();
    return etcd().removeMember(parseInput(Id, request.params, 'member id').id);
  });
  app.post(R.etcdRejoin, admin, async (request) => {
    parseInput(Empty, request.body ?? {}, 'rejoin request');
    await idle();
    return etcd().rejoin();
  });
  // The restore body is the snapshot's bytes, handed to the route unread (never held in memory).
  void app.register((scope, _options, registered) => {
    scope.addContentTypeParser('application/octet-stream', (_request, payload, done) => {
      done(null, payload);
    });
    scope.post(R.etcdRestore, admin, async (request, reply) => {
      const target = etcd();
      if (!(request.body instanceof Readable))
        throw new MoltError(ErrorCode.BadInput, 'send the snapshot as application/octet-stream', {
          hint: 'molt cluster recover --etcd-snapshot FILE sends it',
        });
      await idle();
      if (recovery.uploadDir === undefined)
        throw new MoltError(ErrorCode.Internal, 'the agent has no upload directory');
      const file = await receiveFile({
        body: request.body,
        contentLength: request.headers['content-length'],
        dir: recovery.uploadDir,
        maxBytes: recovery.maxSnapshotBytes ?? MaxSnapshotBytes,
      });
      try {
        // The answer comes once etcd and the control plane run again: minutes on a slow machine.
        return await answerWhenDone(reply, () => target.restore(file.path));
      } finally {
        await file.remove();
      }
    });
    registered();
  });
}

/** An `onRequest` hook: only `force` (admin) may call the route; runs before the body is read. */
function adminOnly(who: (request: FastifyRequest) => Identity) {
  return async (request: FastifyRequest): Promise<void> => {
    requirePermission(who(request), 'force', `call ${request.url}`, RolePermissions);
    await Promise.resolve();
  };
}

/** MOLT_AGENT_BUSY while an upgrade, rollback or reboot runs: it stops and starts services too. */
async function assertIdle(service: AgentService): Promise<void> {
  const op = (await service.status()).operation;
  if (op === null) return;
  throw new MoltError(ErrorCode.AgentBusy, `the agent is running ${op.kind} operation ${op.id}`, {
    hint: `wait for it: molt node events --operation ${op.id} --follow`,
    details: { operationId: op.id, kind: op.kind, phase: op.phase },
  });
}

/** Aborted when the answer is over: sent, or its client gone (a follower that left). */
function closeSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    controller.abort();
  });
  return controller.signal;
}

async function* withNewlines(lines: AsyncIterable<string>): AsyncGenerator<string> {
  for await (const line of lines) yield `${line}\n`;
}

function sendBytes(reply: FastifyReply, bytes: AsyncIterable<Uint8Array>): FastifyReply {
  return reply
    .type('application/octet-stream')
    .header('content-disposition', 'attachment; filename="etcd.snapshot"')
    .send(Readable.from(bytes));
}
