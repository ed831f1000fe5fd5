// SPDX-License-Identifier: Apache-2.0
// Hiding a person's words by the phrase that quotes them: each form the writers make, names and
// reasons holding colons, spaces or the phrase again, and text that quotes no reason left as is.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { blockedBy, heldUntil, withoutReasons } from './quoted-reasons.ts';

const until = '2026-11-24T11:00:00.000Z';

describe('a quoted reason', () => {
  it('is hidden after each phrase the writers form, with who gave it', () => {
    const cases: [string, string][] = [
      [heldUntil(until, 'INC-1 flaky NIC'), `held until ${until}: [reason hidden]`],
      [
        `w-1 is ${heldUntil(until, 'INC-1', 'dashboard:alice')}`,
        `w-1 is held until ${until} by [name hidden]: [reason hidden]`,
      ],
      [
        heldUntil(`${until} (in 1h30m)`, 'INC-1', 'alice'),
        `held until ${until} (in 1h30m) by [name hidden]: [reason hidden]`,
      ],
      [blockedBy('carol', 'CVE-1'), 'blocked by [name hidden]: [reason hidden]'],
      [
        `release 1.2.0 was ${blockedBy('dashboard:carol', 'bad: really')}`,
        'release 1.2.0 was blocked by [name hidden]: [reason hidden]',
      ],
      [
        `release 1.2.0 ${blockedBy('Carol Smith', 'CVE-1', 'pool workers')}`,
        'release 1.2.0 blocked for pool workers by [name hidden]: [reason hidden]',
      ],
    ];
    for (const [text, shown] of cases) assert.equal(withoutReasons(text), shown, text);
  });

  it('is hidden to the end, however it goes on', () => {
    const text = `machine w-1: ${heldUntil(until, `see ${blockedBy('bob', 'x')}; by eve: y`)} (retry)`;
    assert.equal(withoutReasons(text), `machine w-1: held until ${until}: [reason hidden]`);
    assert.doesNotMatch(withoutReasons(text), /bob|eve|retry/);
  });

  it('leaves text that quotes none as it is', () => {
    for (const text of [
      'release 1.2.0 unblocked for pool workers by carol',
      'rollout r halted: 2 failed (budget 1)',
      'the upgrade lease is held by cp-1 for operation op-1',
      'w-1 is held',
    ])
      assert.equal(withoutReasons(text), text);
  });
});
