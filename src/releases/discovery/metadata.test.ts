// SPDX-License-Identifier: Apache-2.0
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig, platformKey } from './metadata.ts';
import { metersManifestGets, nextState } from './scan.ts';
import { keyFingerprint, signatureKey } from './signatures.ts';

const bytes = (v: unknown): Uint8Array =>
  new TextEncoder().encode(typeof v === 'string' ? v : JSON.stringify(v));
const d = (c: string): string => `sha256:${c.repeat(64)}`;

describe('parseConfig', () => {
  it('keeps only the labels molt reads, and the config created time', () => {
    const entry = parseConfig(
      bytes({
        created: '2026-01-02T03:04:05Z',
        config: {
          Labels: {
            'dev.molt.channels': 'stable',
            'dev.molt.official': 'true',
            'com.example.noise': 'x',
          },
        },
      }),
    );
    assert.deepEqual(entry, {
      ok: true,
      labels: { 'dev.molt.channels': 'stable', 'dev.molt.official': 'true' },
      created: '2026-01-02T03:04:05Z',
    });
  });

  it('accepts a config without labels (null Labels, or no config section)', () => {
    assert.deepEqual(parseConfig(bytes({ config: { Labels: null } })), { ok: true, labels: {} });
    assert.deepEqual(parseConfig(bytes({ architecture: 'amd64' })), { ok: true, labels: {} });
  });

  it('turns garbage into a negative entry with MOLT_CONFIG_INVALID', () => {
    for (const bad of ['not json', '[1,2]', '"s"', 'null']) {
      const entry = parseConfig(bytes(bad));
      assert.ok(!entry.ok, bad);
      assert.equal(entry.code, 'MOLT_CONFIG_INVALID');
    }
    assert.equal(parseConfig(new Uint8Array([0xff, 0xfe, 0x7b])).ok, false);
  });

  it('names platforms os/arch[/variant]', () => {
    assert.equal(
      platformKey({ os: 'linux', architecture: 'arm64', variant: 'v8' }),
      'linux/arm64/v8',
    );
    assert.equal(platformKey({ os: 'linux', architecture: 'amd64' }), 'linux/amd64');
  });
});

describe('nextState', () => {
  it('records the new tag map, adds fresh entries and drops digests no tag points at', () => {
    const fp = keyFingerprint('-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n');
    const state = nextState({
      previous: {
        tags: { '1.0.0': d('a'), '0.9.0': d('b') },
        images: {
          'linux/amd64': { [d('a')]: { ok: true, labels: {} }, [d('b')]: { ok: true, labels: {} } },
          'linux/arm64': { [d('b')]: { ok: true, labels: {} } },
        },
        signatures: { [signatureKey(d('b'), fp)]: { format: 'cosign-legacy' } },
      },
      platform: 'linux/amd64',
      tags: { '1.0.0': d('a'), '1.1.0': d('c') },
      fresh: { [d('c')]: { ok: false, code: 'MOLT_CONFIG_INVALID', reason: 'x' } },
      verified: { [signatureKey(d('a'), fp)]: { format: 'sigstore-bundle' } },
    });
    assert.deepEqual(state, {
      tags: { '1.0.0': d('a'), '1.1.0': d('c') },
      images: {
        'linux/amd64': {
          [d('a')]: { ok: true, labels: {} },
          [d('c')]: { ok: false, code: 'MOLT_CONFIG_INVALID', reason: 'x' },
        },
        'linux/arm64': {},
      },
      signatures: { [signatureKey(d('a'), fp)]: { format: 'sigstore-bundle' } },
    });
  });
});

describe('keyFingerprint', () => {
  it('ignores line wrapping and line ends, and tells keys apart', () => {
    const a = '-----BEGIN PUBLIC KEY-----\nAAAABBBB\nCCCC\n-----END PUBLIC KEY-----\n';
    const a2 = '-----BEGIN PUBLIC KEY-----\r\nAAAA\r\nBBBBCCCC\r\n-----END PUBLIC KEY-----';
    const b = '-----BEGIN PUBLIC KEY-----\nAAAABBBBCCCD\n-----END PUBLIC KEY-----\n';
    assert.equal(keyFingerprint(a), keyFingerprint(a2));
    assert.notEqual(keyFingerprint(a), keyFingerprint(b));
  });
});

describe('parseConfig platform check', () => {
  const amd64 = bytes({ os: 'linux', architecture: 'amd64', config: { Labels: {} } });
  it('rejects a single-platform config built for another platform', () => {
    const entry = parseConfig(amd64, { os: 'linux', architecture: 'arm64' });
    assert.ok(!entry.ok);
    assert.equal(entry.code, 'MOLT_PLATFORM_NOT_FOUND');
    assert.match(entry.reason, /linux\/amd64, not linux\/arm64/);
  });
  it('accepts a matching config, and one that does not declare its platform', () => {
    assert.ok(parseConfig(amd64, { os: 'linux', architecture: 'amd64' }).ok);
    assert.ok(
      parseConfig(bytes({ config: {} }), { os: 'linux', architecture: 'arm64', variant: 'v8' }).ok,
    );
  });
});

describe('parseConfig is lenient about what molt does not read', () => {
  it('reads the release labels of a config with created: null and non-string labels', () => {
    const config = {
      created: null,
      architecture: 'amd64',
      os: 'linux',
      config: {
        Labels: {
          'dev.molt.channels': 'stable',
          'com.example.count': 3,
          'dev.molt.official': true,
        },
      },
    };
    const entry = parseConfig(new TextEncoder().encode(JSON.stringify(config)));
    assert.deepEqual(entry, { ok: true, labels: { 'dev.molt.channels': 'stable' } });
  });
});

describe('metersManifestGets', () => {
  it('is true for Docker Hub only, however it is written', () => {
    assert.equal(metersManifestGets('docker.io'), true);
    assert.equal(metersManifestGets('https://registry-1.docker.io'), true);
    assert.equal(metersManifestGets('ghcr.io'), false);
    assert.equal(metersManifestGets('127.0.0.1:5000'), false);
    assert.equal(metersManifestGets(undefined), false);
  });
});
