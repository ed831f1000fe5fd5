// SPDX-License-Identifier: Apache-2.0
/**
 * A scripted {@link AgentService} for API and CLI tests: a fixed status, recorded submissions,
 * an optional running operation that makes every submit answer MOLT_AGENT_BUSY, and a hold that
 * is set and cleared as asked (and shown in the status) but refuses nothing.
 */
import { ErrorCode, MoltError } from '../../core/errors.ts';
import type { AgentStatus, OperationView } from '../../protocol/agent.ts';
import type { AgentHoldRequestBody, HoldView } from '../../protocol/agent-hold.ts';
import type { Identity } from '../../platform/https/identity.ts';
import { holdOf } from '../machine/hold.ts';
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
  /** The hold now; set and cleared by the hold routes. */
  held: HoldView | null;
  /** Every hold request: the body of a set (undefined: a clear) and who asked. */
  readonly holdRequests: { body?: AgentHoldRequestBody; identity: Identity }[];
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
    held: null,
    holdRequests: [],
    status: () =>
      Promise.resolve({
        ...status,
        operation: fake.running ?? null,
        phase: fake.running?.phase ?? 'Idle',
        hold: fake.held,
      }),
    hold: () => Promise.resolve({ hold: fake.held }),
    setHold(body, identity) {
      fake.holdRequests.push({ body, identity });
      fake.held = holdOf(body, { name: identity.name, role: identity.role }, Date.now());
      return Promise.resolve({ hold: fake.held });
    },
    clearHold(identity) {
      fake.holdRequests.push({ identity });
      const released = fake.held;
      fake.held = null;
      return Promise.resolve({ hold: null, released });
    },
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
