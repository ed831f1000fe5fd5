// SPDX-License-Identifier: Apache-2.0
/**
 * Contract of molt's Cluster API extension against hook calls captured from a live CAPI v1.14.2
 * (testdata/README.md): every request parses, every answer is exactly the response schema, and a
 * CanUpdate* patch passes CAPI's own check (testkit/capi-rule.ts, independent of molt's core).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  CanUpdateMachineRequest,
  CanUpdateMachineResponse,
  CanUpdateMachineSetRequest,
  CanUpdateMachineSetResponse,
  DiscoveryRequest,
  DiscoveryResponse,
  UpdateMachineRequest,
  UpdateMachineResponse,
} from '../../protocol/capi-hooks.ts';
import { ExtensionConfig, moltExtensionConfig } from '../../protocol/capi-objects.ts';
import { capiAcceptsMachine, capiAcceptsMachineSet } from '../../testkit/capi-rule.ts';
import { FakeInPlaceUpdates } from '../ports/in-place-updates.fake.ts';
import {
  canUpdateMachine,
  canUpdateMachineSet,
  discoveryAnswer,
  updateMachine,
  type HookDeps,
} from './answers.ts';

const fixture = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`testdata/${name}.json`, import.meta.url), 'utf8')) as Record<
    string,
    unknown
  >;

function deps(
  managed: string[] = ['demo/c1-cp-85mnm', 'demo/c1-md-qbjnv', 'demo/c1-md-qbjnv-mn4b6'],
): HookDeps & {
  updates: FakeInPlaceUpdates;
} {
  return {
    updates: new FakeInPlaceUpdates({ managed }),
    releaseForVersion: (v) => (v === 'v1.35.0' ? 'molt-2.4.0+k8s1.35.0' : undefined),
  };
}

describe('CAPI v1.14.2 hook contract (live fixtures)', () => {
  it('answers discovery with the three in-place handlers, Fail, within 30 s, as captured', () => {
    DiscoveryRequest.parse(fixture('discovery.request'));
    const answer = DiscoveryResponse.parse(discoveryAnswer());
    assert.deepEqual(answer, fixture('discovery.response.inplace-only'));
    for (const h of answer.handlers) {
      assert.equal(h.failurePolicy, 'Fail');
      assert.ok(h.timeoutSeconds <= 30);
    }
  });

  it('patches only the version of a KCP Machine, and CAPI finds current equal to desired', async () => {
    const req = fixture('canupdatemachine.kcp-version.request');
    const answer = CanUpdateMachineResponse.parse(
      await canUpdateMachine(CanUpdateMachineRequest.parse(req), deps()),
    );
    assert.equal(answer.status, 'Success');
    assert.deepEqual(
      answer.machinePatch,
      fixture('canupdatemachine.kcp-version.response.minimal')['machinePatch'],
    );
    assert.equal(answer.infrastructureMachinePatch, undefined);
    assert.ok(capiAcceptsMachine(req as never, answer));
  });

  it('offers no patch for a change it cannot cover (certSANs), so CAPI replaces, never blocks', async () => {
    const req = fixture('canupdatemachine.kcp-certsans-not-coverable.request');
    const answer = CanUpdateMachineResponse.parse(
      await canUpdateMachine(CanUpdateMachineRequest.parse(req), deps()),
    );
    assert.equal(answer.status, 'Success');
    assert.equal(answer.machinePatch, undefined);
    assert.match(answer.message ?? '', /BootstrapConfig spec/);
    assert.equal(capiAcceptsMachine(req as never, answer as never), false);
  });

  it('patches a MachineDeployment’s new MachineSet template version, which CAPI accepts', async () => {
    const req = fixture('canupdatemachineset.md-version.request');
    const answer = CanUpdateMachineSetResponse.parse(
      await canUpdateMachineSet(CanUpdateMachineSetRequest.parse(req), deps()),
    );
    assert.ok(answer.machineSetPatch);
    assert.ok(capiAcceptsMachineSet(req as never, answer));
    assert.equal(
      capiAcceptsMachineSet(req as never, { status: 'Success' }),
      false,
      'without the patch CAPI replaces',
    );
  });

  it('offers no patch when no molt release brings the desired version', async () => {
    const req = CanUpdateMachineRequest.parse(fixture('canupdatemachine.kcp-version.request'));
    const answer = await canUpdateMachine(req, { ...deps(), releaseForVersion: () => undefined });
    assert.equal(answer.machinePatch, undefined);
    assert.match(answer.message ?? '', /no molt release brings Kubernetes v1\.35\.0/);
  });

  for (const which of ['kcp-machine', 'md-machine'])
    it(`follows UpdateMachine for the ${which} to done (in progress → retry in 10 s, then 0)`, async () => {
      const d = deps();
      const req = UpdateMachineRequest.parse(fixture(`updatemachine.${which}.request`));
      const first = UpdateMachineResponse.parse(await updateMachine(req, d));
      assert.deepEqual([first.status, first.retryAfterSeconds], ['Success', 10]);
      const second = UpdateMachineResponse.parse(await updateMachine(req, d));
      assert.deepEqual([second.status, second.retryAfterSeconds], ['Success', 0]);
      assert.deepEqual(
        d.updates.calls.map((c) => c.version),
        ['v1.35.0', 'v1.35.0'],
      );
    });

  it('validates molt-shaped answers CAPI accepted or would, and the ExtensionConfig', () => {
    CanUpdateMachineResponse.parse(fixture('canupdatemachine.kcp-version.response.minimal'));
    CanUpdateMachineResponse.parse(fixture('canupdatemachine.response.cannot'));
    UpdateMachineResponse.parse(fixture('updatemachine.response.in-progress'));
    UpdateMachineResponse.parse(fixture('updatemachine.response.failure'));
    const live = ExtensionConfig.parse(fixture('extensionconfig.v1beta2.live'));
    const mine = moltExtensionConfig({
      name: 'molt',
      url: 'https://127.0.0.1:59443',
      caBundle: 'QUJD',
    });
    assert.deepEqual(mine.spec.namespaceSelector, live.spec.namespaceSelector);
    assert.throws(() =>
      moltExtensionConfig({ name: 'molt', url: 'http://127.0.0.1:1', caBundle: 'QUJD' }),
    );
  });

  it('rejects upstream’s answers as molt’s own (molt’s answers always carry apiVersion and kind)', () => {
    assert.equal(
      CanUpdateMachineResponse.safeParse(fixture('canupdatemachine.kcp-version.response.upstream'))
        .success,
      false,
    );
  });
});
