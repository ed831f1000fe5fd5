// SPDX-License-Identifier: Apache-2.0
// `molt images status|rollback|approve` and `molt plan`'s image section, in-process against a real
// operator API over mutual TLS whose image rollouts the real image driver recorded (fake workloads,
// a fake scan): the list and one rollout's workloads with the planner's decisions, machine
// rollouts refused naming `molt rollout …`, rollback behind --yes, approval, an operator without images.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ImagePolicy } from '../../../core/images/types.ts';
import { imagePass } from '../../../operator/images/drive.ts';
import { createImagePlanHolder } from '../../../operator/images/last-plan.ts';
import { FakeWorkloads } from '../../../operator/ports/workloads.fake.ts';
import { RolloutSummaryView } from '../../../protocol/operator.ts';
import { startCliOperator, type CliOperator } from '../../../testkit/cli-operator.ts';
import { scanOf } from '../../../testkit/image-scan.ts';
import { at, d, followRebuilds, putDeployments, repo } from '../../../testkit/image-world.ts';
import { memoryIo } from '../../io.ts';
import { main } from '../../main.ts';

const ID = 'img-web-1.8.0-rev2-02020202';
const GATED = 'img-gated-1.8.0-rev2-02020202';

const policy = (name: string, namespaces: string[], o: Partial<ImagePolicy> = {}): ImagePolicy =>
  followRebuilds({ name, workloads: [{ kinds: ['Deployment'], namespaces }], ...o });

describe('molt images status|rollback|approve, and molt plan', () => {
  let op: CliOperator;
  let bare: CliOperator;

  before(async () => {
    let tags: Record<string, string> = { '1.8.0': d(1), '1.8.0-rev2': d(1) };
    const workloads = new FakeWorkloads(1);
    putDeployments(
      workloads,
      [
        ['canary', 'canary-web'],
        ['shop', 'web-a'],
        ['gated', 'gated-web'],
      ],
      at(d(1)),
    );
    const images = {
      policies: () => [
        policy('web', ['canary', 'shop'], { canary: { namespaces: ['canary'], soakMs: 600_000 } }),
        policy('gated', ['gated'], { requireApproval: true }),
      ],
      workloads,
      scan: () => Promise.resolve(scanOf(tags)),
      now: () => Date.now(),
      lastPlan: createImagePlanHolder(),
    };
    op = await startCliOperator('images-status-cli', () => ({ images }));
    bare = await startCliOperator('images-status-bare');
    const driver = { ...images, store: op.store, log: () => undefined };
    tags = { ...tags, '1.8.0-rev2': d(2) };
    await imagePass(driver); // records the rollouts and starts the canary
    await imagePass(driver); // plans again: the canary in flight, web-a waiting
  });
  after(async () => {
    await op.close();
    await bare.close();
  });

  async function molt(args: string[], who: 'operator' | 'node' = 'operator', on = op) {
    const io = memoryIo({});
    const code = await main([...args, ...on.flags(who)], io);
    return { code, out: io.stdout(), err: io.stderr() };
  }

  it('lists only image rollouts, newest first, with policy, tag, digest, state, progress and age', async () => {
    const r = await molt(['images', 'status'], 'node');
    assert.equal(r.code, 0, r.err);
    const lines = r.out.trimEnd().split('\n');
    assert.match(lines[0] ?? '', /^ID +POLICY +TAG +DIGEST +STATE +PROGRESS +AGE$/);
    assert.equal(lines.length, 3, r.out);
    assert.match(
      r.out,
      new RegExp(`${ID} +web +1\\.8\\.0-rev2 +sha256:020202020202 +Active +0/2 +\\d+s\\n`),
    );
    assert.match(r.out, new RegExp(`${GATED} +gated +1\\.8\\.0-rev2 .* AwaitingApproval +0/1 `));
    assert.doesNotMatch(r.out, /workers-|cp-1/, 'machine rollouts are left out');
    const only = await molt(['images', 'status', '--policy', 'gated']);
    assert.doesNotMatch(only.out, new RegExp(ID));
    assert.match(
      (await molt(['images', 'status', '--policy', 'none'])).out,
      /^no image rollouts\n$/,
    );
    const json = await molt(['images', 'status', '-o', 'json']);
    const list = RolloutSummaryView.array().parse(JSON.parse(json.out));
    assert.deepEqual(list.map((x) => x.images?.policy).sort(), ['gated', 'web']);
    const wide = await molt(['images', 'status', '-o', 'wide']);
    assert.match(wide.out.split('\n')[0] ?? '', /AGE +FAILED +FROM +CREATED +NOTE$/);
  });

  it('shows one rollout’s workloads: phase, from → to, and the planner’s decision and reason', async () => {
    const r = await molt(['images', 'status', 'img-web']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, new RegExp(`^rollout: +${ID}\\npolicy: +web \\(${repo}\\)\\n`));
    assert.match(r.out, /progress: 0\/2 workloads done \(1 in flight, 0 failed, 1 pending\)/);
    assert.match(r.out, /UNIT +PHASE +FROM → TO +STARTED +DECISION +REASON\n/);
    assert.match(
      r.out,
      /Deployment\/canary\/canary-web +InFlight +1\.8\.0-rev2@sha256:01010101… → 1\.8\.0-rev2@sha256:02020202… +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \([^)]*\) +in-flight/,
    );
    assert.match(
      r.out,
      /Deployment\/shop\/web-a +Pending +→ 1\.8\.0-rev2@sha256:02020202… +- +wait +\w+: /,
    );
  });

  it('refuses a machine rollout naming `molt rollout …`, and an unknown one as not found', async () => {
    for (const verb of ['status', 'approve', 'rollback']) {
      const r = await molt(['images', verb, 'workers-1.1.0']);
      assert.equal(r.code, 1);
      assert.match(r.err, /MOLT_BAD_INPUT: rollout workers-1\.1\.0 is a machine rollout/);
      assert.match(r.err, new RegExp(`molt rollout ${verb} workers-1\\.1\\.0`));
    }
    const none = await molt(['images', 'status', 'img-nope']);
    assert.equal(none.code, 1);
    assert.match(none.err, /MOLT_ROLLOUT_NOT_FOUND/);
    const flag = await molt(['images', 'rollback', ID, '--reason', '']);
    assert.match(flag.err, /MOLT_BAD_FLAG: --reason is empty/);
  });

  it('approves a gated image rollout (operator role; a node may not)', async () => {
    const denied = await molt(['images', 'approve', GATED], 'node');
    assert.equal(denied.code, 1);
    assert.match(denied.err, /MOLT_FORBIDDEN: w-9 \(role node\) may not call POST/);
    const r = await molt(['images', 'approve', GATED]);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, `rollout ${GATED}: now Active\n`);
  });

  it('without --yes prints what a rollback puts back and stops; with it, starts the rollback', async () => {
    const dry = await molt(['images', 'rollback', ID]);
    assert.equal(dry.code, 1);
    assert.match(
      dry.out,
      /Deployment\/canary\/canary-web web: 1\.8\.0-rev2@sha256:02020202… → 1\.8\.0-rev2@sha256:01010101…\n/,
    );
    assert.match(dry.err, /MOLT_BAD_FLAG: not rolled back: .* needs --yes/);
    assert.equal((await op.store.read()).rollouts.filter((x) => x.rollbackOf === ID).length, 0);
    assert.equal((await molt(['rollout', 'pause', ID])).code, 0);
    const r = await molt(['images', 'rollback', ID, '--yes', '--reason', 'bad build']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, new RegExp(`started, back to 1\\.8\\.0-rev2@${d(1)}`));
    const list = await molt(['images', 'status', '-o', 'wide']);
    assert.match(list.out, new RegExp(`rollback of ${ID}`));
  });

  it('molt plan adds the image driver’s last plan; an operator without images leaves it out', async () => {
    const r = await molt(['plan']);
    assert.equal(r.code, 0, r.err);
    assert.match(
      r.out,
      /\nimage rollouts \(the image driver's last pass, at \S+Z \((?:[\dhdms]+ ago|now)\)\):\n/,
    );
    assert.match(r.out, new RegExp(`${ID} +web +1\\.8\\.0-rev2 +Active +continue`));
    assert.match(r.out, /ROLLOUT +WORKLOAD +ACTION/);
    assert.match(r.out, /Deployment\/shop\/web-a +wait/);
    const json = await molt(['plan', '-o', 'json']);
    assert.ok((JSON.parse(json.out) as { images?: unknown }).images !== undefined);
    const old = await molt(['plan'], 'operator', bare);
    assert.equal(old.code, 0, old.err);
    assert.doesNotMatch(old.out, /image rollouts/);
  });
});
