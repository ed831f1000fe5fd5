// SPDX-License-Identifier: Apache-2.0
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { errorAnswers } from './errors.ts';
import { identityFromSubject, requirePermission } from './identity.ts';

describe('errorAnswers', () => {
  const answer = errorAnswers({ [ErrorCode.AgentBusy]: 409 }, 'the daemon hit a bug');

  it('answers a listed code with its status and the error as an ErrorBody', () => {
    const e = new MoltError(ErrorCode.AgentBusy, 'busy', { hint: 'wait', details: { op: 'x' } });
    assert.deepEqual(answer(e), {
      status: 409,
      body: { code: ErrorCode.AgentBusy, message: 'busy', hint: 'wait', details: { op: 'x' } },
    });
  });

  it('answers a code another API lists as a server-side failure (500)', () => {
    assert.equal(answer(new MoltError(ErrorCode.RolloutNotFound, 'gone')).status, 500);
  });

  it('answers a framework client error as MOLT_BAD_INPUT and anything else without a stack', () => {
    const tooLarge = Object.assign(new Error('body too large'), { statusCode: 413 });
    assert.deepEqual(answer(tooLarge), {
      status: 413,
      body: { code: ErrorCode.BadInput, message: 'body too large' },
    });
    assert.deepEqual(answer(new TypeError('x is undefined')), {
      status: 500,
      body: { code: ErrorCode.Internal, message: 'the daemon hit a bug' },
    });
  });
});

describe('identityFromSubject and requirePermission', () => {
  it('names the server in a refusal of a certificate without a molt role', () => {
    assert.throws(
      () => identityFromSubject({ CN: 'w-1', O: 'acme' }, 'the operator'),
      /names no molt role the operator knows \(no O=molt:<role>\)/,
    );
  });

  it('checks a permission against the table it is given', () => {
    const who = identityFromSubject({ CN: 'w-1', O: ['acme', 'molt:node'] }, 'this agent');
    assert.deepEqual(who, { name: 'w-1', role: 'node' });
    const table = { node: ['read'], operator: ['read', 'write'], admin: ['read', 'write'] };
    requirePermission(who, 'read', 'read', table);
    assert.throws(() => {
      requirePermission(who, 'write', 'call POST /x', table);
    }, /w-1 \(role node\) may not call POST \/x/);
  });
});
