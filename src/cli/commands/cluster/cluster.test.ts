// SPDX-License-Identifier: Apache-2.0
// `molt cluster kubernetes …` in-process against a real operator API over mutual TLS, whose
// Kubernetes plans run on the plan tests' fake control plane (three machines).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createKubePlanDriver, type KubePlanDriver } from '../../../operator/kubernetes/driver.ts';
import { world, type World } from '../../../operator/kubernetes/fixtures.test.ts';
import { startCliOperator, type CliOperator } from '../../../testkit/cli-operator.ts';
import { memoryIo } from '../../io.ts';
import { main } from '../../main.ts';

describe('molt cluster kubernetes', () => {
  let op: CliOperator;
  let w: World;
  let driver: KubePlanDriver;

  before(async () => {
    w = await world();
    const plans = w.deps({ store: w.store });
    driver = createKubePlanDriver(plans);
    op = await startCliOperator('cluster-cli', () => ({
      store: w.store,
      kubernetes: {
        plans,
        kick: (c) => {
          driver.kick(c);
        },
      },
    }));
  });
  after(async () => {
    await driver.stop();
    await op.close();
  });

  async function molt(args: string[]): Promise<{ code: number; out: string; err: string }> {
    const io = memoryIo({});
    const code = await main([...args, ...op.flags('operator')], io);
    return { code, out: io.stdout(), err: io.stderr() };
  }

  it('prints the checks and the steps of a dry run, and changes nothing', async () => {
    const r = await molt(['cluster', 'kubernetes', 'upgrade', '--to', 'v1.36.3', '--dry-run']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^dry run: nothing changed/);
    assert.match(r.out, /plan 0001-upgrade-v1.36.3: upgrade v1.35.4 → v1.36.3 emulating 1.35/);
    assert.match(r.out, /ok {3}releases: every control-plane machine's release admits v1.36.3/);
    assert.match(r.out, /10-cp-2-forfeit-leadership +pending/);
    assert.deepEqual(await w.store.kubeUpgrades(), []);
  });

  it('refuses a skipped minor with its code and exit 1', async () => {
    const r = await molt(['cluster', 'kubernetes', 'upgrade', '--to', 'v1.37.0']);
    assert.equal(r.code, 1);
    assert.match(r.err, /MOLT_KUBE_VERSION_SKEW/);
    const bad = await molt(['cluster', 'kubernetes', 'upgrade', '--to', '1.36']);
    assert.match(bad.err, /MOLT_BAD_FLAG: --to must be a Kubernetes version like v1.36.3/);
  });

  it('upgrades, following the steps to the end, then shows every machine × component', async () => {
    const r = await molt(['cluster', 'kubernetes', 'upgrade', '--to', 'v1.36.3', '--follow']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /13-cp-2-apply-kube-scheduler: done/);
    assert.match(r.out, /Succeeded, asked by alice\n$/);
    const s = await molt(['cluster', 'kubernetes', 'status']);
    assert.match(s.out, /cluster default: desired v1.36.3, set by alice/);
    assert.match(s.out, /cp-3 +kube-controller-manager +v1.36.3 +1.35 +yes/);
    const json = await molt(['cluster', 'kubernetes', 'status', '-o', 'json']);
    const view = JSON.parse(json.out) as { plan: { phase: string }; machines: unknown[] };
    assert.equal(view.plan.phase, 'Succeeded');
    assert.equal(view.machines.length, 3);
  });

  it('finalizes, then a rollback is refused', async () => {
    const r = await molt(['cluster', 'kubernetes', 'finalize', '--follow', '-o', 'json']);
    assert.equal(r.code, 0, r.err);
    const back = await molt(['cluster', 'kubernetes', 'rollback']);
    assert.equal(back.code, 1);
    assert.match(back.err, /MOLT_ROLLOUT_STATE: plan 0002-finalize-v1.36.3 is a finalize/);
  });
});
