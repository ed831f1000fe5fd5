// SPDX-License-Identifier: Apache-2.0
// observeImages over the Workloads fake and a fake scan: one decision per unit, a failing registry
// confined to its policy, conflicts and empty policies reported.
import { scanOf } from '../../testkit/image-scan.ts';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, MoltError } from '../../core/errors.ts';
import { dig, policy, REPO, T0 } from '../../core/images/fixtures.test.ts';
import type { ImagePolicy } from '../../core/images/types.ts';
import type { Rollout } from '../../core/rollout/types.ts';
import { ImagesView } from '../../protocol/operator-images.ts';
import type { ImageRepositoryScan } from '../../releases/discovery/images.ts';
import { FakeWorkloads } from '../ports/workloads.fake.ts';
import { observeImages } from './observe.ts';

const DNS = 'registry.example.com/acme/dns';

interface Setup {
  readonly policies: readonly ImagePolicy[];
  readonly repositories: Readonly<Record<string, ImageRepositoryScan | Error>>;
}

function world(s: Setup): {
  workloads: FakeWorkloads;
  scanned: string[];
  run: (rollouts?: readonly Rollout[]) => Promise<ImagesView>;
} {
  const workloads = new FakeWorkloads();
  const scanned: string[] = [];
  const run = (rollouts: readonly Rollout[] = []) =>
    observeImages(
      {
        policies: () => s.policies,
        workloads,
        scan: (r) => {
          scanned.push(r);
          const got = s.repositories[r];
          if (got === undefined) return Promise.reject(new Error(`no ${r}`));
          return got instanceof Error ? Promise.reject(got) : Promise.resolve(got);
        },
        now: () => T0,
      },
      rollouts,
    );
  return { workloads, scanned, run };
}

const web = (name: string, image: string, namespace = 'shop') => ({
  kind: 'Deployment' as const,
  namespace,
  name,
  labels: {},
  containers: [{ name: 'web', image }],
});

describe('observeImages', () => {
  it('names the image rollout of a move, so a target refused after a halt says so', async () => {
    const w = world({
      policies: [policy()],
      repositories: { [REPO]: scanOf({ '1.8.0-rev2': dig(2) }) },
    });
    w.workloads.put(web('old', `${REPO}:1.8.0-rev2@${dig(1)}`));
    const halted: Rollout = {
      id: 'img-web-1.8.0-rev2-00000000',
      pool: 'web/1.8.0-rev2',
      target: { version: '1.8.0-rev2', digest: dig(2) },
      state: 'Superseded',
      createdAt: T0,
      machines: {},
      images: { policy: 'web', repository: REPO, units: {} },
    };
    const back = {
      ...halted,
      id: `${halted.id}-rollback`,
      rollbackOf: halted.id,
      state: 'Completed' as const,
    };
    const other = { ...halted, id: 'x', images: { ...halted.images, policy: 'dns' } } as Rollout;
    const [unit] = ImagesView.parse(await w.run([halted, back, other])).policies[0]?.units ?? [];
    assert.deepEqual(unit?.rollout, { id: halted.id, state: 'Superseded', refused: true });
    // A completed rollout a person rolled back refuses its target too.
    const done = { ...halted, state: 'Completed' as const };
    const [kept] = ImagesView.parse(await w.run([done, back])).policies[0]?.units ?? [];
    assert.deepEqual(kept?.rollout, { id: halted.id, state: 'Completed', refused: true });
    const [repairable] = ImagesView.parse(await w.run([done])).policies[0]?.units ?? [];
    assert.deepEqual(repairable?.rollout, { id: halted.id, state: 'Completed' });
    const [fresh] = ImagesView.parse(await w.run()).policies[0]?.units ?? [];
    assert.equal(fresh?.rollout, undefined);
  });

  it('a rebuild behind the intermediate tag is a move; the digest it runs is current', async () => {
    const w = world({
      policies: [policy()],
      repositories: { [REPO]: scanOf({ '1.8.0-rev2': dig(2), '1.8.0-rev2-b3': dig(2) }) },
    });
    w.workloads.put(web('old', `${REPO}:1.8.0-rev2@${dig(1)}`));
    w.workloads.put(web('new', `${REPO}:1.8.0-rev2@${dig(2)}`));
    const view = ImagesView.parse(await w.run());
    const [p] = view.policies;
    assert.equal(p?.follow, 'rebuilds');
    assert.deepEqual(p.scan, { tags: 2 });
    const old = p.units.find((u) => u.id === 'Deployment/shop/old');
    assert.deepEqual(old?.decision, {
      kind: 'move',
      tag: '1.8.0-rev2',
      digest: dig(2),
      image: `${REPO}:1.8.0-rev2@${dig(2)}`,
      from: dig(1),
    });
    assert.deepEqual(p.units.find((u) => u.id === 'Deployment/shop/new')?.decision, {
      kind: 'current',
      digest: dig(2),
    });
    assert.deepEqual(view.platforms, ['linux/amd64']);
    assert.deepEqual(w.scanned, [REPO]);
  });

  it('a GM-pinned unit is skipped, naming the pin and the target it would take', async () => {
    const w = world({
      policies: [policy({ gm: [{ digest: dig(1), reason: 'SP1 GM' }] })],
      repositories: { [REPO]: scanOf({ '1.8.0-rev2': dig(2) }) },
    });
    w.workloads.put(web('gm', `${REPO}:1.8.0-rev2@${dig(1)}`));
    const [unit] = (await w.run()).policies[0]?.units ?? [];
    assert.equal(unit?.decision.kind, 'skip');
    assert.equal(unit.decision.reason, 'GMPinned');
    assert.match(unit.decision.message ?? '', /SP1 GM/);
    assert.equal(unit.decision.tag, '1.8.0-rev2');
    assert.equal(unit.decision.digest, dig(2));
  });

  it('a failing registry makes only its own policy’s units wait, with the error’s code', async () => {
    const w = world({
      policies: [policy(), policy({ name: 'dns', repository: DNS })],
      repositories: {
        [REPO]: scanOf({ '1.8.0-rev2': dig(2) }),
        [DNS]: new MoltError(
          ErrorCode.RegistryUnreachable,
          'registry.example.com: connection refused',
        ),
      },
    });
    w.workloads.put(web('shop', `${REPO}:1.8.0-rev2@${dig(1)}`));
    w.workloads.put(web('coredns', `${DNS}:1.11.0-rev1@${dig(7)}`, 'kube-system'));
    w.workloads.put(web('dns-2', `${DNS}:1.11.0-rev1@${dig(7)}`));
    const view = await w.run();
    const [shop, dns] = view.policies;
    assert.equal(shop?.units[0]?.decision.kind, 'move');
    assert.deepEqual(
      dns?.units.map((u) => [u.id, u.decision.kind, u.decision.reason]),
      [['Deployment/shop/dns-2', 'wait', 'MOLT_REGISTRY_UNREACHABLE']],
    );
    assert.match(dns.units[0]?.decision.message ?? '', /connection refused/);
    assert.equal(
      dns.scan?.error,
      'MOLT_REGISTRY_UNREACHABLE: registry.example.com: connection refused',
    );
    assert.deepEqual([...w.scanned].sort(), [DNS, REPO]);
  });

  it('reports a container two policies select as a conflict of both, and a policy that selects nothing', async () => {
    const w = world({
      policies: [
        policy(),
        policy({ name: 'web-too', workloads: [{ namespaces: ['shop'], names: ['both'] }] }),
        policy({ name: 'nothing', repository: DNS, workloads: [{ namespaces: ['nowhere'] }] }),
      ],
      repositories: { [REPO]: scanOf({ '1.8.0-rev2': dig(1) }) },
    });
    w.workloads.put(web('both', `${REPO}:1.8.0-rev2@${dig(1)}`));
    w.workloads.put(web('one', `${REPO}:1.8.0-rev2@${dig(1)}`));
    const [a, b, none] = (await w.run()).policies;
    const conflict = {
      unit: 'Deployment/shop/both',
      container: 'web',
      policies: ['web', 'web-too'],
    };
    assert.deepEqual(a?.conflicts, [conflict]);
    assert.deepEqual(b?.conflicts, [conflict]);
    assert.deepEqual(
      a.units.map((u) => u.id),
      ['Deployment/shop/one'],
    );
    assert.deepEqual(b.units, []);
    assert.equal(b.empty, false);
    assert.equal(none?.empty, true);
    assert.equal(none.scan, undefined);
  });

  it('scans a repository once per call however many policies follow it', async () => {
    const w = world({
      policies: [policy(), policy({ name: 'web-2', workloads: [{ namespaces: ['other'] }] })],
      repositories: { [REPO]: scanOf({ '1.8.0-rev2': dig(1) }) },
    });
    w.workloads.put(web('a', `${REPO}:1.8.0-rev2@${dig(1)}`));
    w.workloads.put(web('b', `${REPO}:1.8.0-rev2@${dig(1)}`, 'other'));
    await w.run();
    assert.deepEqual(w.scanned, [REPO]);
  });
});
