// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { RemovedFlags, removedFlagsIn } from './removed-flags.ts';
import { KubeComponents, type KubeComponent } from './types.ts';

/** Where `scripts/ensure-kube-bins.sh` caches a version's binaries (without building anything). */
function cached(version: string): string | undefined {
  const root =
    process.env['MOLT_KUBE_CACHE'] ??
    join(
      process.env['XDG_CACHE_HOME'] ?? join(process.env['HOME'] ?? '/', '.cache'),
      'molt',
      'kube',
    );
  if (!existsSync(root)) return undefined;
  const dir = execFileSync('ls', [root], { encoding: 'utf8' })
    .split('\n')
    .find((d) => d.startsWith(`${version}-etcd`));
  return dir === undefined ? undefined : join(root, dir);
}

/** The long flag names a component's `--help` lists. */
function flagsOf(dir: string, component: KubeComponent): Set<string> {
  let help: string;
  try {
    help = execFileSync(join(dir, component), ['--help'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (e) {
    // --help exits 0 on these builds; older ones printed it with exit 2.
    help = (e as { stdout?: string }).stdout ?? '';
  }
  return new Set([...help.matchAll(/^\s+(?:-\w, )?--([a-z0-9-]+)/gm)].map((m) => m[1] ?? ''));
}

describe('flags removed per minor', () => {
  it('refuses a flag the target minor removed, not one removed later', () => {
    const args = {
      'kube-controller-manager': {
        'pod-eviction-timeout': '1m',
        'node-monitor-grace-period': '40s',
      },
    };
    assert.deepEqual(removedFlagsIn(args, '1.27'), [
      { component: 'kube-controller-manager', flag: 'pod-eviction-timeout', removedIn: '1.27' },
    ]);
    assert.deepEqual(removedFlagsIn(args, '1.26'), []);
    assert.deepEqual(
      removedFlagsIn({ 'kube-apiserver': { 'insecure-port': '0' } }, '1.36').map((f) => f.flag),
      ['insecure-port'],
    );
  });

  it('applies a table a test gives (1.36 removals are found in 1.36, not 1.35)', () => {
    const table = { ...RemovedFlags, 'kube-scheduler': { 'made-up': '1.36' } };
    assert.equal(removedFlagsIn({ 'kube-scheduler': { 'made-up': 'x' } }, '1.36', table).length, 1);
    assert.equal(removedFlagsIn({ 'kube-scheduler': { 'made-up': 'x' } }, '1.35', table).length, 0);
  });

  const v135 = cached('v1.35.4');
  const v136 = cached('v1.36.3');
  const skip =
    v135 === undefined || v136 === undefined
      ? 'v1.35.4 and v1.36.3 are not cached: run bash scripts/ensure-kube-bins.sh --all'
      : false;
  it(
    'is true for 1.35 → 1.36: every flag 1.35 has and 1.36 lacks is in the table, and no flag the table calls removed is served',
    { skip },
    () => {
      for (const component of KubeComponents) {
        const old = flagsOf(v135 ?? '', component);
        const now = flagsOf(v136 ?? '', component);
        assert.ok(old.size > 50 && now.size > 50, `${component} --help lists its flags`);
        const gone = [...old].filter((f) => !now.has(f));
        for (const flag of gone)
          assert.equal(RemovedFlags[component][flag], '1.36', `${component} --${flag}`);
        for (const [flag, minor] of Object.entries(RemovedFlags[component])) {
          if (minor !== '1.36')
            assert.ok(!old.has(flag), `${component} 1.35 still serves --${flag}`);
          assert.ok(!now.has(flag), `${component} 1.36 still serves --${flag}`);
        }
      }
    },
  );
});
