// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { packageFile, packageRoot, packageVersion } from './package-files.ts';

describe('the package root', () => {
  it('is the folder of molt’s package.json, two above this module in a checkout', () => {
    assert.equal(packageRoot, join(import.meta.dirname, '..', '..'));
    const manifest = JSON.parse(readFileSync(packageFile('package.json'), 'utf8')) as {
      name: string;
      version: string;
    };
    assert.equal(manifest.name, 'molt');
    assert.equal(packageVersion, manifest.version);
  });
});
