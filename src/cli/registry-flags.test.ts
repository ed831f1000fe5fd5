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

describe('registry flags with a context', () => {
  const context = { registry: 'lab.example:5000', repository: 'molt/installer', insecure: true };
  const rest = { platform: 'linux/amd64', timeout: '30000' };
  it('take the context’s registry, repository and plain HTTP when nothing else names them', () => {
    const f = parseRegistryFlags(rest, {}, context);
    assert.deepEqual(
      [f.client.registry, f.repository, f.client.insecure],
      ['lab.example:5000', 'molt/installer', true],
    );
  });
  it('let a flag or a variable win, and keep the context’s plain HTTP to its own registry', () => {
    const flag = parseRegistryFlags({ ...rest, registry: 'prod.example' }, {}, context);
    assert.deepEqual([flag.client.registry, flag.client.insecure], ['prod.example', false]);
    const env = parseRegistryFlags(rest, { MOLT_REPOSITORY: 'acme/os' }, context);
    assert.deepEqual([env.client.registry, env.repository], ['lab.example:5000', 'acme/os']);
  });
  it('say where a registry can come from when none is named', () => {
    assert.throws(
      () => parseRegistryFlags(rest, {}, {}),
      (e: unknown) =>
        e instanceof Error &&
        e.message === '--registry is required' &&
        /a context that names one/.test((e as { hint?: string }).hint ?? ''),
    );
  });
});
