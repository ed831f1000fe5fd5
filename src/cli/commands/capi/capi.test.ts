// SPDX-License-Identifier: Apache-2.0
// `molt capi extension-config`: the ExtensionConfig that registers the operator's Cluster API
// extension (docs/adr/0014) — what CAPI v1.14 reads (validated by its schema), and bad flags named.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { tempDir } from '../../../platform/process/managed-process.ts';
import { ExtensionConfig } from '../../../protocol/capi-objects.ts';
import { memoryIo } from '../../io.ts';
import { main } from '../../main.ts';

const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
let dir: { path: string; remove(): Promise<void> };

async function molt(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = memoryIo();
  const code = await main(args, io);
  return { code, out: io.stdout(), err: io.stderr() };
}

describe('molt capi extension-config', () => {
  before(async () => {
    dir = await tempDir('capi-cli');
    await writeFile(join(dir.path, 'ca.pem'), PEM);
    await writeFile(join(dir.path, 'key.txt'), 'not a certificate');
  });
  after(() => dir.remove());

  it('prints the ExtensionConfig: the URL and the CA as its caBundle', async () => {
    const r = await molt(
      ...['capi', 'extension-config', '--url', 'https://127.0.0.1:9443/'],
      ...['--ca', join(dir.path, 'ca.pem')],
    );
    assert.equal(r.code, 0, r.err);
    const config = ExtensionConfig.parse(parse(r.out));
    assert.equal(config.metadata.name, 'molt');
    assert.equal(config.spec.clientConfig.url, 'https://127.0.0.1:9443');
    assert.equal(Buffer.from(config.spec.clientConfig.caBundle ?? '', 'base64').toString(), PEM);
  });

  it('refuses a plain-HTTP URL and a CA that is not a certificate, naming the flag', async () => {
    const http = await molt(
      ...['capi', 'extension-config', '--url', 'http://127.0.0.1:9443'],
      ...['--ca', join(dir.path, 'ca.pem')],
    );
    assert.equal(http.code, 1);
    assert.match(http.err, /MOLT_BAD_FLAG.*--url.*https/);
    const notPem = await molt(
      ...['capi', 'extension-config', '--url', 'https://127.0.0.1:9443'],
      ...['--ca', join(dir.path, 'key.txt')],
    );
    assert.match(notPem.err, /MOLT_BAD_FLAG: --ca .*not a PEM certificate/);
  });
});
