// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { MachineRecord } from '../ports/store.ts';
import { anonymousRedactor, anonymousView } from './anonymous-view.ts';

const machine = (id: string, endpoint: string): MachineRecord => ({
  id,
  endpoint,
  role: 'worker',
  pool: 'workers',
  labels: {},
});

const redact = anonymousRedactor({
  machines: [
    machine('w-1', 'https://10.0.0.1:7443'),
    machine('node-2.lab', 'https://node-2.lab:7443'),
    machine('w-3', 'https://w-3.example:7443/'),
  ],
  holds: { 'w-1': { reason: 'INC-4711', until: 0 }, 'w-3': { reason: 'x', until: 0 } },
});

describe('the anonymous redaction', () => {
  it('hides endpoints in every form a message takes, and any other URL or ip:port', () => {
    assert.equal(
      redact(
        'the agent of w-1 at https://10.0.0.1:7443 is unreachable: connect ECONNREFUSED 10.0.0.1:7443',
      ),
      'the agent of w-1 at [address hidden] is unreachable: connect ECONNREFUSED [address hidden]',
    );
    assert.equal(
      redact('getaddrinfo ENOTFOUND w-3.example'),
      'getaddrinfo ENOTFOUND [address hidden]',
    );
    assert.equal(
      redact('provider at https://u:p@provider.lab/v1, then [fd00::7]:7443.'),
      'provider at [address hidden], then [address hidden].',
    );
    assert.equal(
      redact('connect EHOSTUNREACH 10.231.4.17 (after 3 tries); 10.0.0.9.'),
      'connect EHOSTUNREACH [address hidden] (after 3 tries); [address hidden].',
    );
  });

  it('keeps machine ids, versions, times and indexes, even an id that is its agent’s host', () => {
    for (const text of [
      'node-2.lab: upgrade to 1.2.3 accepted',
      'held until 2026-11-24T10:00:00.000Z',
      'pools[0].provider: sha256:abc',
      'release 1.2.3-rc.1 from 10.2.3',
    ])
      assert.equal(redact(text), text);
    assert.equal(redact('node-2.lab at node-2.lab:7443'), 'node-2.lab at [address hidden]');
  });

  it('hides a hold’s reason and holder where a message quotes them, not the same letters elsewhere', () => {
    assert.equal(
      redact('held until 2026-11-24T11:00:00.000Z: INC-4711'),
      'held until 2026-11-24T11:00:00.000Z: [reason hidden]',
    );
    assert.equal(redact('INC-4711'), '[reason hidden]');
    assert.equal(
      redact('w-3 is held until … by alice: x'),
      'w-3 is held until … by [name hidden]: [reason hidden]',
      'who held it is hidden too, as on the machine itself',
    );
    assert.equal(
      redact('wax: xylophone'),
      'wax: xylophone',
      'a one-letter reason is not cut from words',
    );
  });

  it('hides any reason a person may write', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), (reason) => {
        fc.pre(reason.trim() !== '');
        const r = anonymousRedactor({ machines: [], holds: { m: { reason, until: 0 } } });
        const message = `held until 2026-11-24T11:00:00.000Z: ${reason.trim()}`;
        assert.equal(r(message), 'held until 2026-11-24T11:00:00.000Z: [reason hidden]');
      }),
    );
  });

  it('rewrites every string of an answer, keys and other values kept, and changes nothing twice', () => {
    const view = { a: ['https://x.y/z', 3, null, { 'https://k': true, s: 'w-1' }] };
    assert.deepEqual(anonymousView(view, redact), {
      a: ['[address hidden]', 3, null, { 'https://k': true, s: 'w-1' }],
    });
    fc.assert(
      fc.property(fc.string(), (s) => {
        const once = redact(s);
        assert.equal(redact(once), once);
      }),
    );
  });
});
