// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RegistryError } from '../oci/http-errors.ts';
import type * as errors from './errors.ts';
import { ErrorCode, isMoltError, MoltError } from './errors.ts';

/** A second instance of this module, as the bundled CLI holds beside tsc's modules. */
const copy = (await import(`./errors.ts?copy=${String(Date.now())}`)) as typeof errors;

describe('MoltError across copies of its module', () => {
  it('is a second class (the copy is real)', () => {
    assert.notEqual(copy.MoltError, MoltError);
  });

  it('is recognised by instanceof and isMoltError whichever copy made it', () => {
    const theirs = new copy.MoltError(ErrorCode.ImageInvalid, 'bad input', { hint: 'fix it' });
    assert.ok(theirs instanceof MoltError);
    assert.ok(isMoltError(theirs, ErrorCode.ImageInvalid));
    assert.ok(!isMoltError(theirs, ErrorCode.AgentBusy), 'the code still decides');
    assert.ok(new MoltError(ErrorCode.AgentBusy, 'x') instanceof copy.MoltError);
  });

  it('is not claimed by anything else', () => {
    const others = [new Error('x'), { code: ErrorCode.AgentBusy }, 'text', null, undefined];
    for (const [i, other] of others.entries())
      assert.ok(!(other instanceof MoltError), `value ${String(i)}`);
  });

  it('keeps the prototype check for a subclass', () => {
    const plain = new MoltError(ErrorCode.RegistryUnauthorized, 'down');
    assert.ok(!(plain instanceof RegistryError), 'a MoltError is not every subclass');
    const reg = new RegistryError(ErrorCode.RegistryUnauthorized, 'down', { status: 503 });
    assert.ok(reg instanceof RegistryError);
    assert.ok(reg instanceof MoltError);
  });
});
