// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Notification } from '../../ports/notification-sink.ts';
import { bodyOf, slackBody } from './body.ts';

const failed: Notification = {
  id: 'molt-7-0123456789abcdef',
  seq: 7,
  kind: 'machine.rolled-back',
  at: '2026-11-23T10:00:00.000Z',
  message: 'w-1: RolledBack (health <deadline> & more)',
  rollout: 'workers-1.2.0-abcd',
  machine: 'w-1',
  pool: 'workers',
  release: { version: '1.2.0', digest: `sha256:${'ab'.repeat(32)}` },
  reason: 'health <deadline> & more',
  by: 'operator',
  data: { phase: 'RolledBack' },
};

describe('webhook bodies', () => {
  it('json: the notification itself, every field', () => {
    assert.deepEqual(JSON.parse(bodyOf('json', failed)), failed);
  });

  it('slack: a readable message — headline, the sentence, pool, release, who — escaped for mrkdwn', () => {
    const b = slackBody(failed);
    assert.equal(
      b.text,
      ':warning: Machine w-1 rolled back: w-1: RolledBack (health &lt;deadline&gt; &amp; more)',
    );
    assert.deepEqual(b.blocks, [
      {
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: '*:warning: Machine w-1 rolled back*\nw-1: RolledBack (health &lt;deadline&gt; &amp; more)',
        },
      },
      {
        type: 'context',
        elements: [
          'pool *workers*',
          'release *1.2.0*',
          'rollout `workers-1.2.0-abcd`',
          'by operator',
          '2026-11-23T10:00:00.000Z',
        ].map((text) => ({ type: 'mrkdwn', text })),
      },
    ]);
    assert.deepEqual(JSON.parse(bodyOf('slack', failed)), b);
  });

  it('slack: marks what finished well and plain news differently from trouble', () => {
    const rollout: Notification = { ...failed, kind: 'rollout.completed' };
    delete (rollout as { machine?: string }).machine;
    const done = slackBody(rollout);
    assert.match(done.text, /^:white_check_mark: Rollout workers-1\.2\.0-abcd completed: /);
    const hold = slackBody({ ...failed, kind: 'decision.hold', by: 'alice' });
    assert.match(hold.text, /^:information_source: Decision hold: /);
  });
});
