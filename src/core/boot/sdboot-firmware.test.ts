// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  blsFileName,
  nextTryFileName,
  parseBlsEntry,
  parseBlsFileName,
  parseLoaderConf,
  renderBlsEntry,
  renderLoaderConf,
} from './bls.ts';
import { sdBoot, sdBootGlob, sdBootMenu, type EntryFile } from './firmware.ts';
import { strverscmpImproved } from './verscmp.ts';

const body = (slot: 'A' | 'B', version: string, sortKey = 'molt'): string =>
  renderBlsEntry({
    title: `molt 1.${version} (slot ${slot})`,
    version,
    sortKey,
    linux: `/molt/${slot.toLowerCase()}/vmlinuz`,
    options: `molt.slot=${slot} panic=10`,
  });
const loader = renderLoaderConf();

describe('BLS file names', () => {
  it('splits the counter like config_entry_parse_tries', () => {
    assert.deepEqual(parseBlsFileName('molt-b+1.conf'), {
      id: 'molt-b',
      triesLeft: 1,
      triesDone: 0,
    });
    assert.deepEqual(parseBlsFileName('molt-b+0-3.conf'), {
      id: 'molt-b',
      triesLeft: 0,
      triesDone: 3,
    });
    assert.deepEqual(parseBlsFileName('molt-a.conf'), { id: 'molt-a' });
    assert.deepEqual(parseBlsFileName('a+b+2.conf'), { id: 'a+b', triesLeft: 2, triesDone: 0 });
    assert.deepEqual(parseBlsFileName('x+1-y.conf'), { id: 'x+1-y' });
    assert.equal(parseBlsFileName('loader.txt'), undefined);
    assert.equal(parseBlsFileName('auto-windows.conf'), undefined);
  });

  it('renders names and the next-try rename', () => {
    assert.equal(blsFileName({ id: 'molt-b', triesLeft: 1 }), 'molt-b+1.conf');
    assert.equal(blsFileName({ id: 'molt-b', triesLeft: 0, triesDone: 2 }), 'molt-b+0-2.conf');
    assert.equal(blsFileName({ id: 'molt-a' }), 'molt-a.conf');
    assert.equal(nextTryFileName({ id: 'n', triesLeft: 3 }), 'n+2-1.conf');
    assert.equal(nextTryFileName({ id: 'n', triesLeft: 0, triesDone: 3 }), 'n+0-4.conf');
    assert.equal(nextTryFileName({ id: 'n' }), undefined);
  });

  it('round-trips names', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/),
        fc.option(fc.tuple(fc.nat(9), fc.nat(9)), { nil: undefined }),
        (id, tries) => {
          const name =
            tries === undefined ? { id } : { id, triesLeft: tries[0], triesDone: tries[1] };
          assert.deepEqual(parseBlsFileName(blsFileName(name)), name);
        },
      ),
    );
  });

  it('parses bodies and loader.conf', () => {
    const e = parseBlsEntry(
      '# c\ntitle  "molt x"\nversion 3\nsort-key molt\nlinux /k\ninitrd /i1\ninitrd /i2\noptions a=1\noptions b\n',
    );
    assert.deepEqual(e, {
      title: 'molt x',
      version: '3',
      sortKey: 'molt',
      linux: '/k',
      initrd: ['/i1', '/i2'],
      options: 'a=1 b',
    });
    assert.deepEqual(parseLoaderConf(loader), { default: 'molt-*', timeout: '0' });
  });
});

describe('strverscmpImproved', () => {
  it('orders like systemd (its documented example list)', () => {
    const older = [
      '122.1',
      '123~rc1-1',
      '123',
      '123-a',
      '123-a.1',
      '123-1',
      '123-1.1',
      '123^post1',
      '123.a-1',
      '123.1-1',
      '123a-1',
      '124-1',
    ];
    for (let i = 0; i + 1 < older.length; i += 1)
      assert.ok(
        strverscmpImproved(older[i] ?? '', older[i + 1] ?? '') < 0,
        `${older[i]} < ${older[i + 1]}`,
      );
    assert.ok(strverscmpImproved('10', '9') > 0);
    assert.equal(strverscmpImproved('007', '7'), 0);
    assert.ok(strverscmpImproved('molt-b.conf', 'molt-a.conf') > 0);
  });
});

describe('sdBoot (systemd-boot 252 model)', () => {
  const files = (...list: [string, string][]): EntryFile[] =>
    list.map(([fileName, b]) => ({ fileName, body: b }));

  it('boots a trial once (higher version first), renaming +1 → +0-1, then the committed entry', () => {
    const first = sdBoot(
      files(['molt-a.conf', body('A', '1')], ['molt-b+1.conf', body('B', '2')]),
      loader,
    );
    assert.equal(first.chosen, 'molt-b+1.conf');
    assert.deepEqual(first.rename, { from: 'molt-b+1.conf', to: 'molt-b+0-1.conf' });
    assert.equal(first.cmdline, 'molt.slot=B panic=10');
    const second = sdBoot(
      files(['molt-a.conf', body('A', '1')], ['molt-b+0-1.conf', body('B', '2')]),
      loader,
    );
    assert.equal(second.chosen, 'molt-a.conf');
    assert.equal(second.rename, undefined);
  });

  it('counts three tries down, then falls back', () => {
    let name = 'molt-b+3.conf';
    const seen: string[] = [];
    for (let i = 0; i < 4; i += 1) {
      const r = sdBoot(files(['molt-a.conf', body('A', '1')], [name, body('B', '2')]), loader);
      seen.push(r.chosen ?? '-');
      if (r.rename) name = r.rename.to;
    }
    assert.deepEqual(seen, ['molt-b+3.conf', 'molt-b+2-1.conf', 'molt-b+1-2.conf', 'molt-a.conf']);
    assert.equal(name, 'molt-b+0-3.conf');
  });

  it('without sort-key ignores version: molt-b sorts before molt-a whatever the versions', () => {
    const r = sdBoot(
      files(
        ['molt-a+1.conf', body('A', '9').replace('sort-key molt\n', '')],
        ['molt-b.conf', body('B', '1').replace('sort-key molt\n', '')],
      ),
      loader,
    );
    assert.equal(r.chosen, 'molt-b.conf');
  });

  it('boots an exhausted entry only when nothing else matches `default` (the §2.3 pitfall)', () => {
    const pitfall = sdBoot(
      files(['plain.conf', body('A', '1')], ['molt-b+0-1.conf', body('B', '2')]),
      loader,
    );
    assert.equal(pitfall.chosen, 'molt-b+0-1.conf');
    assert.equal(pitfall.exhausted, true);
    assert.deepEqual(pitfall.rename, { from: 'molt-b+0-1.conf', to: 'molt-b+0-2.conf' });
  });

  it('skips entries whose kernel is missing, and boots nothing without entries', () => {
    const r = sdBoot(
      files(['molt-a.conf', body('A', '1')], ['molt-b+1.conf', body('B', '2')]),
      loader,
      (p) => p !== '/molt/b/vmlinuz',
    );
    assert.equal(r.chosen, 'molt-a.conf');
    assert.equal(sdBoot([], loader).chosen, undefined);
  });

  it('orders sort-key entries before others, exhausted last', () => {
    const menu = sdBootMenu(
      files(
        ['z.conf', 'title z\nlinux /z\n'],
        ['molt-a+0-1.conf', body('A', '5')],
        ['molt-b.conf', body('B', '2')],
      ),
    );
    assert.deepEqual(
      menu.map((e) => e.fileName),
      ['molt-b.conf', 'z.conf', 'molt-a+0-1.conf'],
    );
  });

  it('matches `default` globs case-insensitively', () => {
    assert.ok(sdBootGlob('molt-*', 'molt-b+1.conf'));
    assert.ok(sdBootGlob('MOLT-?.conf', 'molt-a.conf'));
    assert.ok(!sdBootGlob('molt-*', 'other.conf'));
    assert.ok(sdBootGlob('molt-[ab].conf', 'molt-b.conf'));
  });

  it('matches a loader.conf default with many stars in linear time, not by regex backtracking', () => {
    // Found by src/core/boot/boot.fuzz.test.ts: a translated regex took 56 s for eight stars.
    const pattern = `${'*a'.repeat(40)}b`;
    assert.equal(sdBootGlob(pattern, 'a'.repeat(250)), false);
    assert.equal(sdBootGlob(pattern, `${'a'.repeat(249)}b`), true);
  });

  it('reads classes with ranges and leaves other characters literal', () => {
    assert.ok(sdBootGlob('molt-[a-c].conf', 'molt-b.conf'));
    assert.ok(!sdBootGlob('molt-[a-c].conf', 'molt-d.conf'));
    assert.ok(sdBootGlob('molt.(a)+$.conf', 'molt.(a)+$.conf'));
    assert.ok(!sdBootGlob('molt-[ab', 'molt-[ab'), 'an unclosed class matches nothing');
    assert.ok(sdBootGlob('*', ''));
    assert.ok(!sdBootGlob('?', ''));
  });
});
