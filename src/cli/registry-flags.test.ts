// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRegistryFlags } from './registry-flags.ts';

const base = {
  registry: 'reg.example',
  repository: 'acme/installer',
  platform: 'linux/amd64',
  timeout: '30000',
};

describe('registry flags', () => {
  it('pass token-service hosts the password may go to, from the flag or the environment', () => {
    const flag = parseRegistryFlags(
      { ...base, tokenRealms: 'auth.docker.io, , auth.example:8443' },
      {},
    );
    assert.deepEqual(flag.client.tokenRealms, ['auth.docker.io', 'auth.example:8443']);
    const env = parseRegistryFlags(base, { MOLT_REGISTRY_TOKEN_REALMS: 'auth.docker.io' });
    assert.deepEqual(env.client.tokenRealms, ['auth.docker.io']);
    assert.equal(parseRegistryFlags(base, {}).client.tokenRealms, undefined, 'none by default');
  });
});
