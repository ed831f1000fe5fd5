// SPDX-License-Identifier: Apache-2.0
// Bad input said on the object (docs/adr/0013): an ImagePolicy that selects nothing, or a container
// two policies select, shows it in its `Following` condition instead of quietly doing nothing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { policy, workload } from '../../core/images/fixtures.test.ts';
import { selectUnits } from '../../core/images/units.ts';
import { followingCondition, withFollowingConditions } from './following-status.ts';
import { verdict } from '../../testkit/image-world.ts';

const web = policy({ name: 'web', workloads: [{ namespaces: ['shop'] }] });
const other = policy({ name: 'other', workloads: [{ namespaces: ['shop'], names: ['front'] }] });
const none = policy({ name: 'none', workloads: [{ namespaces: ['nowhere'] }] });
const front = workload('front', { namespace: 'shop' });
const back = workload('back', { namespace: 'shop' });

describe('the Following condition', () => {
  it('is True counting the containers and workloads a policy follows', () => {
    const c = followingCondition(web, selectUnits([web], [front, back]));
    assert.equal(c.status, 'True');
    assert.equal(c.reason, 'Selected');
    assert.match(c.message, /^follows 2 containers of 2 workloads in /);
  });

  it('is False SelectsNothing for a policy naming no workload that runs its repository', () => {
    const c = followingCondition(none, selectUnits([web, none], [front]));
    assert.deepEqual([c.status, c.reason], ['False', 'SelectsNothing']);
    assert.match(c.message, /no container of the workloads it names runs /);
  });

  it('is False Conflict on both policies of a container they both select, naming both', () => {
    const s = selectUnits([web, other], [front, back]);
    for (const p of [web, other]) {
      const c = followingCondition(p, s);
      assert.deepEqual([c.status, c.reason], ['False', 'Conflict'], p.name);
      assert.match(c.message, /^MOLT_IMAGE_POLICY_CONFLICT: .*front.* web and other: neither/);
    }
  });

  it('is Unknown before the image driver read the cluster', () => {
    assert.equal(followingCondition(web, undefined).status, 'Unknown');
  });

  it('goes on the verdict of an object whose policy is in force, not one the fleet file overrides', () => {
    const verdicts = [verdict('web', 'Accepted'), verdict('none', 'DefinedInFleetFile')];
    const out = withFollowingConditions(
      verdicts,
      new Map([
        ['web', web],
        ['none', none],
      ]),
      selectUnits([web, none], [front]),
    );
    assert.deepEqual(
      out[0]?.conditions?.map((c) => c.reason),
      ['Selected'],
    );
    assert.equal(out[1]?.conditions, undefined);
  });
});
