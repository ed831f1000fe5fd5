// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { sha256Digest } from '../../oci/index.ts';
import { gzipLayer, readTar } from './entries.ts';
import { DefaultConfigPath, operatorImage, type OperatorImageInputs } from './image.ts';
import { debianLayerEntries, moltLayerEntries, nodeLayerEntries } from './rootfs.ts';

const text = (s: string): Uint8Array => new TextEncoder().encode(s);
const inputs = (node = 'node v24'): OperatorImageInputs => ({
  layers: {
    debian: gzipLayer(
      debianLayerEntries([
        { kind: 'file', path: 'lib/x86_64-linux-gnu/libc.so.6', mode: 0o755, data: text('libc') },
      ]),
    ),
    node: gzipLayer(nodeLayerEntries(text(node))),
    molt: gzipLayer(
      moltLayerEntries([
        { kind: 'file', path: 'usr/lib/molt/dist/bin/molt.js', mode: 0o755, data: text('molt') },
      ]),
    ),
  },
  version: '0.1.0',
  revision: 'd4cf4f8aa0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5',
  created: '2026-11-29T11:09:00Z',
});

interface Config {
  created: string;
  architecture: string;
  os: string;
  config: {
    Entrypoint: string[];
    Cmd: string[];
    Env: string[];
    User: string;
    WorkingDir: string;
    Labels: Record<string, string>;
  };
  rootfs: { diff_ids: string[] };
}
const configOf = (i: OperatorImageInputs): Config =>
  JSON.parse(Buffer.from(operatorImage(i).config.bytes).toString()) as Config;

describe('the operator image config', () => {
  it('runs `molt operator --config /etc/molt/config/operator.yaml` as 65532 in production mode', () => {
    const c = configOf(inputs());
    assert.equal(c.architecture, 'amd64');
    assert.equal(c.os, 'linux');
    assert.deepEqual(c.config.Entrypoint, [
      '/usr/local/bin/node',
      '/usr/lib/molt/dist/bin/molt.js',
      'operator',
    ]);
    assert.deepEqual(c.config.Cmd, ['--config', DefaultConfigPath]);
    assert.equal(c.config.User, '65532:65532');
    assert.equal(c.config.WorkingDir, '/home/nonroot');
    assert.ok(c.config.Env.includes('NODE_ENV=production'));
    assert.ok(c.config.Env.some((e) => e.startsWith('PATH=/usr/local/bin:')));
  });

  it('labels the version, revision and creation time, and the source only when known', () => {
    const labels = configOf(inputs()).config.Labels;
    assert.equal(labels['org.opencontainers.image.version'], '0.1.0');
    assert.equal(
      labels['org.opencontainers.image.revision'],
      'd4cf4f8aa0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5',
    );
    assert.equal(labels['org.opencontainers.image.created'], '2026-11-29T11:09:00Z');
    assert.equal(labels['org.opencontainers.image.source'], undefined);
    const sourced = configOf({ ...inputs(), source: 'https://example.com/molt' }).config.Labels;
    assert.equal(sourced['org.opencontainers.image.source'], 'https://example.com/molt');
  });

  it('has three layers whose diff_ids hash their tar archives, Node in the second', () => {
    const image = operatorImage(inputs());
    const c = configOf(inputs());
    assert.equal(image.layers.length, 3);
    assert.deepEqual(
      c.rootfs.diff_ids,
      image.layers.map((l) => sha256Digest(gunzipSync(l.bytes))),
    );
    const nodeLayer = image.layers[1];
    assert.ok(nodeLayer);
    const entries = readTar(gunzipSync(nodeLayer.bytes), 'node layer');
    const node = entries.find((e) => e.path === 'usr/local/bin/node');
    assert.ok(node?.kind === 'file');
    assert.equal(Buffer.from(node.data).toString(), 'node v24');
    const moltLayer = image.layers[2];
    assert.ok(moltLayer);
    const molt = readTar(gunzipSync(moltLayer.bytes), 'molt layer').map((e) => e.path);
    assert.ok(molt.includes('usr/lib/molt/dist/bin/molt.js'));
    assert.ok(molt.includes('usr/local/bin/molt'));
  });

  it('has the same digest for the same inputs, and another for another Node', () => {
    const a = operatorImage(inputs()).manifest.descriptor.digest;
    assert.equal(operatorImage(inputs()).manifest.descriptor.digest, a);
    assert.notEqual(operatorImage(inputs('node v24.1')).manifest.descriptor.digest, a);
    assert.notEqual(operatorImage({ ...inputs(), version: '0.1.1' }).manifest.descriptor.digest, a);
  });
});
