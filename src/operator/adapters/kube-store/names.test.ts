// SPDX-License-Identifier: Apache-2.0
// Record names (docs/adr/0016): every key, whatever it holds, makes a name the API server accepts
// (a DNS-1123 subdomain of at most 253 characters), and keys that differ only in case or in
// characters a name cannot hold make different names.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nameOf, RecordKinds } from './names.ts';

const subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

describe('record names', () => {
  it('reads as kind and key where the key allows it', () => {
    assert.match(
      nameOf('rollout', 'workers-2.0.0-abababab'),
      /^rollout\.workers-2-0-0-abababab\.[0-9a-f]{12}$/,
    );
    assert.match(nameOf('machine', 'w-1'), /^machine\.w-1\.[0-9a-f]{12}$/);
  });

  it('is a valid object name for any key, and distinct for distinct keys', () => {
    const keys = [
      'w-1',
      'W-1',
      'workers-A',
      'workers-a',
      'sha256:ab/pool:a%2Fb%20c',
      'sha256:ab/all',
      '',
      '---',
      'ü',
      'x'.repeat(1000),
      `${'x'.repeat(999)}y`,
      '000000000001',
    ];
    const names = new Set<string>();
    for (const kind of RecordKinds)
      for (const key of keys) {
        const name = nameOf(kind, key);
        assert.match(name, subdomain, name);
        assert.ok(name.length <= 253, name);
        names.add(name);
      }
    assert.equal(names.size, RecordKinds.length * keys.length);
  });
});
