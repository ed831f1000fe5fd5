// SPDX-License-Identifier: Apache-2.0
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentEvent } from '../../../protocol/index.ts';
import { memoryIo } from '../../io.ts';
import { createEventPrinter, holdLine } from './render.ts';

const e = (
  kind: AgentEvent['kind'],
  phase: string,
  extra: Partial<AgentEvent> = {},
): AgentEvent => ({
  operationId: 'op-1',
  seq: 1,
  time: '2026-11-22T10:00:00.000Z',
  kind,
  phase,
  status: 'started',
  message: `${phase} msg`,
  ...extra,
});
const progress = (bytes: number) =>
  e('progress', 'Pulling', { progress: { bytes, total: 4 * 1_048_576 } });

describe('event printer', () => {
  it('draws one rewritten byte bar on a terminal, closed by the next phase line', () => {
    const io = { ...memoryIo(), isTty: true };
    let out = '';
    const printer = createEventPrinter({ ...io, out: (t) => (out += t) }, 'table');
    printer.print(progress(1_048_576));
    printer.print(progress(2 * 1_048_576));
    printer.print(e('phase', 'Cordoning'));
    const [bar = '', next = ''] = out.split('\n');
    assert.equal(bar.split('\r').length, 3, 'two carriage-return redraws on one line');
    assert.match(bar, /\rPulling +\[#{15}-{15}\] {2}50% {2}2\.0 MiB \/ 4\.0 MiB$/);
    assert.match(next, /^10:00:00 {2}Cordoning +started +Cordoning msg$/);
  });

  it('prints plain lines per tenth without a terminal', () => {
    const io = memoryIo();
    const printer = createEventPrinter(io, 'table');
    for (const bytes of [0, 100, 1_048_576, 1_100_000, 4 * 1_048_576])
      printer.print(progress(bytes));
    assert.deepEqual(
      io
        .stdout()
        .trim()
        .split('\n')
        .map((l) => /(\d+)%/.exec(l)?.[1]),
      ['0', '20', '100'],
    );
    assert.doesNotMatch(io.stdout(), /\r/);
  });
});

describe('event lines of a failure', () => {
  // The agent's failed step carries its error, whose message the step's message already holds;
  // the result repeats it as its reason. Printed so, a refusal read three times.
  const message = 'slot A already runs 1.0.0 (sha256:cabb2a0e6e0d); nothing to upgrade';
  const failed = e('log', 'Pulling', {
    status: 'failed',
    message: `PullImage failed: ${message}`,
    error: { code: 'MOLT_ALREADY_RUNNING', message },
  });
  const result = e('result', 'Idle', {
    status: 'failed',
    message: `upgrade failed: ${message}`,
    result: { result: 'Failed', reason: message },
    error: { code: 'MOLT_ALREADY_RUNNING', message },
  });

  it('says the agent’s message once, with its code', () => {
    const io = memoryIo();
    const printer = createEventPrinter(io, 'table');
    printer.print(failed);
    printer.print(result);
    assert.equal(
      io.stdout(),
      `10:00:00  Pulling                failed   PullImage failed: ${message} [MOLT_ALREADY_RUNNING]\n` +
        '10:00:00  result: Failed MOLT_ALREADY_RUNNING (operation op-1)\n',
    );
  });

  it('keeps an error the step’s message does not hold, and a reason not yet shown', () => {
    const io = memoryIo();
    const printer = createEventPrinter(io, 'table');
    printer.print({ ...failed, message: 'PullImage failed' });
    printer.print(result);
    printer.print(e('result', 'Idle', { result: { result: 'Failed', reason: 'power cut' } }));
    assert.deepEqual(io.stdout().split('\n').slice(0, 3), [
      `10:00:00  Pulling                failed   PullImage failed [MOLT_ALREADY_RUNNING: ${message}]`,
      '10:00:00  result: Failed MOLT_ALREADY_RUNNING (operation op-1)',
      '10:00:00  result: Failed (operation op-1): power cut',
    ]);
  });
});

describe('hold line', () => {
  const hold = {
    reason: 'disk swap',
    until: '2026-11-22T12:00:00.000Z',
    setBy: { name: 'operator', role: 'operator' as const },
    onBehalfOf: 'alice',
    setAt: '2026-11-22T10:00:00.000Z',
  };
  const noon = Date.parse(hold.until);

  it('names the person an operator held the machine for, and says when the hold has ended', () => {
    assert.equal(
      holdLine(hold, noon - 3_600_000),
      'until 2026-11-22T12:00:00Z (in 1h) by alice (via operator): disk swap',
    );
    assert.equal(
      holdLine(hold, noon + 120_000),
      'ended 2026-11-22T12:00:00Z (2m ago) by alice (via operator): disk swap',
    );
    const direct = { ...hold, onBehalfOf: undefined };
    assert.equal(
      holdLine(direct, noon - 1),
      'until 2026-11-22T12:00:00Z (now) by operator: disk swap',
    );
  });

  it('tells no hold from an agent that keeps none', () => {
    assert.equal(holdLine(null, noon), 'none');
    assert.equal(holdLine(undefined, noon), 'unknown (this agent keeps no holds)');
  });
});
