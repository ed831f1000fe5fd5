// SPDX-License-Identifier: Apache-2.0
// The removed-flags table (src/core/kubernetes/removed-flags.ts) against the real binaries of the
// two Kubernetes versions the tests run (scripts/kube-versions.env): every flag the previous
// version's components list and the current one's do not is in the table for the current minor,
// and no flag the table calls removed is still served. The previous version may still be building
// beside the first lanes (scripts/test.sh): kubeBinaries waits for it.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { RemovedFlags } from '../../../src/core/kubernetes/removed-flags.ts';
import { KubeComponents, type KubeComponent } from '../../../src/core/kubernetes/types.ts';
import { kubeBinaries } from '../../../src/platform/kube/binaries.ts';

const versionsFile = join(import.meta.dirname, '../../../scripts/kube-versions.env');

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

describe('the removed-flags table against the real components', () => {
  let previous = '';
  let current = '';
  let minor = '';
  before(async () => {
    const env = Object.fromEntries(
      [...(await readFile(versionsFile, 'utf8')).matchAll(/^(\w+)=(\S+)/gm)].map((m) => [
        m[1] ?? '',
        m[2] ?? '',
      ]),
    );
    const [from, to] = [env['KUBERNETES_PREVIOUS'] ?? '', env['KUBERNETES'] ?? ''];
    minor = /^v(1\.\d+)\./.exec(to)?.[1] ?? '';
    assert.ok(minor !== '', `KUBERNETES in kube-versions.env: '${to}'`);
    [previous, current] = [await kubeBinaries(undefined, from), await kubeBinaries(undefined, to)];
  });

  it('lists every flag the previous minor serves and the current one lacks, and none still served', () => {
    for (const component of KubeComponents) {
      const old = flagsOf(previous, component);
      const now = flagsOf(current, component);
      assert.ok(old.size > 50 && now.size > 50, `${component} --help lists its flags`);
      const gone = [...old].filter((f) => !now.has(f));
      for (const flag of gone)
        assert.equal(RemovedFlags[component][flag], minor, `${component} --${flag}`);
      for (const [flag, removedIn] of Object.entries(RemovedFlags[component])) {
        if (removedIn !== minor)
          assert.ok(!old.has(flag), `${component} (previous) still serves --${flag}`);
        assert.ok(!now.has(flag), `${component} ${minor} still serves --${flag}`);
      }
    }
  });
});
