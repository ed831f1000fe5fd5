// SPDX-License-Identifier: Apache-2.0
// `molt images list` in-process against a real operator API over mutual TLS whose images are the
// Workloads fake and a fake scan: the table, `--policy` and `-o json`.
import { scanOf } from '../../../testkit/image-scan.ts';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode, MoltError } from '../../../core/errors.ts';
import { dig, policy, REPO, T0 } from '../../../core/images/fixtures.test.ts';
import { FakeWorkloads } from '../../../operator/ports/workloads.fake.ts';
import { ImagesView } from '../../../protocol/operator-images.ts';
import { startCliOperator, type CliOperator } from '../../../testkit/cli-operator.ts';
import { memoryIo } from '../../io.ts';
import { main } from '../../main.ts';
import { nextText, rolloutNote, shortImage } from './render.ts';

const DNS = 'registry.example.com/acme/dns';

describe('molt images list', () => {
  let op: CliOperator;

  before(async () => {
    const workloads = new FakeWorkloads();
    const put = (name: string, image: string, containers = ['web']) => {
      workloads.put({
        kind: 'Deployment',
        namespace: 'shop',
        name,
        labels: {},
        containers: containers.map((c) => ({ name: c, image })),
      });
    };
    put('web', `${REPO}:1.8.0-rev2@${dig(1)}`, ['web', 'sidecar']);
    put('web-gm', `${REPO}:1.8.0-rev2@${dig(9)}`);
    put('web-new', `${REPO}:1.8.0-rev2@${dig(2)}`);
    put('dns', `${DNS}:1.11.0-rev1@${dig(7)}`);
    op = await startCliOperator('images-cli', () => ({
      images: {
        policies: () => [
          policy({ gm: [{ digest: dig(9), reason: 'SP1 GM' }] }),
          policy({ name: 'dns', repository: DNS }),
        ],
        workloads,
        scan: (r) =>
          r === REPO
            ? Promise.resolve(scanOf({ '1.8.0-rev2': dig(2) }))
            : Promise.reject(new MoltError(ErrorCode.RegistryUnreachable, 'connection refused')),
        now: () => T0,
      },
    }));
  });
  after(async () => {
    await op.close();
  });

  async function molt(args: string[]): Promise<{ code: number; out: string; err: string }> {
    const io = memoryIo({});
    const code = await main([...args, ...op.flags('node')], io);
    return { code, out: io.stdout(), err: io.stderr() };
  }

  it('prints each followed workload, the image it runs and what comes next', async () => {
    const r = await molt(['images', 'list']);
    assert.equal(r.code, 0, r.err);
    const lines = r.out.trimEnd().split('\n');
    assert.match(lines[0] ?? '', /^POLICY +WORKLOAD +CONTAINER\(S\) +IMAGE +AVAILABLE +NEXT$/);
    const h8 = (n: number) => dig(n).slice(0, 15);
    assert.match(
      r.out,
      new RegExp(
        `web +Deployment/shop/web +web,sidecar +acme/web:1\\.8\\.0-rev2@${h8(1)}… +yes +→ 1\\.8\\.0-rev2@${dig(2).slice(0, 19)}\\n`,
      ),
    );
    assert.match(r.out, /web +Deployment\/shop\/web-gm .* +skip: GMPinned\n/);
    assert.match(r.out, /web +Deployment\/shop\/web-new .* += *\n/);
    assert.match(r.out, /dns +Deployment\/shop\/dns .* +wait: MOLT_REGISTRY_UNREACHABLE\n/);
    assert.match(
      r.out,
      /policy dns: registry\.example\.com\/acme\/dns: MOLT_REGISTRY_UNREACHABLE: connection refused\n$/,
    );
  });

  it('--policy keeps one policy; an unknown one is a flag error naming the known ones', async () => {
    const r = await molt(['images', 'list', '--policy', 'dns']);
    assert.equal(r.code, 0, r.err);
    assert.doesNotMatch(r.out, /Deployment\/shop\/web/);
    assert.match(r.out, /Deployment\/shop\/dns/);
    const bad = await molt(['images', 'list', '--policy', 'nope']);
    assert.equal(bad.code, 1);
    assert.match(bad.err, /MOLT_BAD_FLAG: --policy nope: no such image policy/);
    assert.match(bad.err, /web, dns/);
  });

  it('-o json prints the view as the API answers it', async () => {
    const r = await molt(['images', 'list', '-o', 'json']);
    assert.equal(r.code, 0, r.err);
    const view = ImagesView.parse(JSON.parse(r.out));
    assert.deepEqual(
      view.policies.map((p) => [p.name, p.units.map((u) => u.decision.kind)]),
      [
        ['web', ['move', 'skip', 'current']],
        ['dns', ['wait']],
      ],
    );
  });
});

describe('the images table cells', () => {
  it('shorten an image to path:tag@digest8… and a move to tag@digest12', () => {
    assert.equal(
      shortImage(`${REPO}:1.8.0-rev2@${dig(0xabcdef12)}`),
      'acme/web:1.8.0-rev2@sha256:00000000…',
    );
    assert.equal(shortImage(`${REPO}:1.8.0-rev2`), 'acme/web:1.8.0-rev2');
    assert.equal(nextText({ kind: 'move', tag: 't', digest: dig(1) }), '→ t@sha256:000000000000');
    assert.equal(nextText({ kind: 'wait', reason: 'TagMissing' }), 'wait: TagMissing');
    assert.equal(nextText({ kind: 'current' }), '=');
    const unit = {
      id: 'Deployment/shop/web',
      containers: ['web'],
      image: 'r/web:t@sha256:1',
      available: true,
      decision: { kind: 'move' as const, tag: 't', digest: dig(1) },
    };
    assert.equal(rolloutNote(unit), '');
    assert.equal(
      rolloutNote({ ...unit, rollout: { id: 'img-1', state: 'Active' } }),
      ' (img-1 Active)',
    );
    assert.equal(
      rolloutNote({ ...unit, rollout: { id: 'img-1', state: 'Halted' } }),
      ' (img-1 Halted, not offered again)',
    );
    assert.equal(
      rolloutNote({ ...unit, rollout: { id: 'img-1', state: 'Completed', refused: true } }),
      ' (img-1 Completed, rolled back: not offered again)',
    );
    assert.equal(
      rolloutNote({ ...unit, rollout: { id: 'img-1', state: 'Completed' } }),
      ' (img-1 Completed)',
    );
  });
});
