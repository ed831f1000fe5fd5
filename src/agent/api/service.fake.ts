// SPDX-License-Identifier: Apache-2.0
/**
 * A scripted {@link AgentService} for API and CLI tests: a fixed status, recorded submissions,
 * and an optional running operation that makes every submit answer MOLT_AGENT_BUSY.
 */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { AgentStatus, OperationView } from '../../protocol/agent.ts';
import type { AgentService, ApiOperationRequest } from './service.ts';

/** The fake's knobs, mutable by tests. */
export interface FakeAgentService extends AgentService {
  readonly submitted: ApiOperationRequest[];
  /** While set, submit() answers busy naming this operation. */
  running: OperationView | undefined;
  /** Thrown by the next submit() (then cleared). */
  failNext: Error | undefined;
  /** Names of the identities that cancelled. */
  readonly cancelled: string[];
}

/** A status as a worker booted on slot A with B empty would report it. */
export function sampleStatus(): AgentStatus {
  return {
    node: 'node-1',
    role: 'worker',
    bootId: 'boot-1',
    bootedSlot: 'A',
    version: '1.0.0',
    slots: [
      { slot: 'A', status: 'ready', version: '1.0.0', digest: 'sha256:aaaa', generation: 1 },
      { slot: 'B', status: 'empty', version: null, digest: null, generation: null },
    ],
    boot: {
      bootloader: 'grub',
      committed: 'A',
      oneShot: null,
      entries: [{ slot: 'A', state: 'committed' }],
    },
    phase: 'Idle',
    operation: null,
    last: null,
  };
}

/** A fake service; operation ids are `op-1`, `op-2`, … */
export function createFakeAgentService(status: AgentStatus = sampleStatus()): FakeAgentService {
  let n = 0;
  const fake: FakeAgentService = {
    submitted: [],
    cancelled: [],
    running: undefined,
    failNext: undefined,
    status: () =>
      Promise.resolve({
        ...status,
        operation: fake.running ?? null,
        phase: fake.running?.phase ?? 'Idle',
      }),
    cancel(identity) {
      const running = fake.running;
      if (running?.phase !== 'Pulling')
        return Promise.reject(
          new MoltError(ErrorCode.NotCancellable, 'only a pull can be cancelled', {
            ...(running !== undefined && { details: { operationId: running.id } }),
          }),
        );
      fake.cancelled.push(identity.name);
      fake.running = undefined;
      return Promise.resolve({ operationId: running.id });
    },
    submit(request) {
      const failure = fake.failNext;
      fake.failNext = undefined;
      if (failure !== undefined) return Promise.reject(failure);
      const running = fake.running;
      if (running !== undefined) {
        return Promise.reject(
          new MoltError(
            ErrorCode.AgentBusy,
            `the agent is busy with ${running.kind} ${running.id} (${running.phase})`,
            {
              details: { operationId: running.id, kind: running.kind, phase: running.phase },
            },
          ),
        );
      }
      fake.submitted.push(request);
      const id = `op-${String(++n)}`;
      fake.running = {
        id,
        kind: request.kind,
        phase: 'Pulling',
        startedAt: new Date(0).toISOString(),
      };
      return Promise.resolve({ operationId: id });
    },
  };
  return fake;
}
