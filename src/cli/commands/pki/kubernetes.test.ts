// SPDX-License-Identifier: Apache-2.0
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { chmod, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { tempDir } from '../../../platform/process/managed-process.ts';
import { memoryIo } from '../../io.ts';
import { main } from '../../main.ts';

const run = promisify(execFile);

async function molt(args: string[]) {
  const io = memoryIo({});
  const code = await main(args, io);
  return { code, stdout: io.stdout(), stderr: io.stderr() };
}

describe('molt pki kubernetes', () => {
  let tmp: { path: string; remove: () => Promise<void> };
  let out: string;
  before(async () => {
    tmp = await tempDir('pki-kube');
    out = join(tmp.path, 'prod');
  });
  after(() => tmp.remove());

  it('makes a PKI whose serving certificate openssl verifies, with the SANs given', async () => {
    const r = await molt([
      ...['pki', 'kubernetes', '--cluster', 'prod', '--out', out],
      ...[
        '--server',
        'https://10.232.0.10:6443',
        '--san',
        'DNS:cp-1.lab',
        '--san',
        'IP:10.232.0.11',
      ],
      ...['--service-cidr', '10.112.0.0/12', '--days', '30'],
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^wrote the Kubernetes PKI of cluster prod in /);
    assert.ok(r.stdout.includes(join(out, 'pki', 'sa.key')), r.stdout);
    assert.ok(
      r.stdout.includes(`workers join with the bootstrap token in ${join(out, 'bootstrap-token')}`),
      r.stdout,
    );
    const crt = join(out, 'pki', 'apiserver.crt');
    const verify = await run('openssl', ['verify', '-CAfile', join(out, 'pki', 'ca.crt'), crt]);
    assert.equal(verify.stdout.trim(), `${crt}: OK`);
    const { stdout } = await run('openssl', [
      'x509',
      '-in',
      crt,
      '-noout',
      '-ext',
      'subjectAltName',
    ]);
    for (const san of [
      'DNS:cp-1.lab',
      'IP Address:10.232.0.11',
      'IP Address:10.232.0.10',
      'IP Address:10.112.0.1',
    ])
      assert.ok(stdout.includes(san), `${san} in ${stdout}`);
    const notAfter = new X509Certificate(await readFile(crt)).validToDate;
    const days = (notAfter.getTime() - Date.now()) / 86_400_000;
    assert.ok(days > 29 && days <= 30, String(days));
    assert.equal((await stat(join(out, 'pki', 'ca.key'))).mode & 0o777, 0o600);
  });

  it('--check prints OK and the files', async () => {
    const r = await molt(['pki', 'kubernetes', '--check', out, '--cluster', 'prod']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^OK: .* is the Kubernetes PKI of cluster prod\n/);
    assert.ok(r.stdout.includes(`  ${join(out, 'admin.conf')}\n`));
    const json = await molt([
      'pki',
      'kubernetes',
      '--check',
      out,
      '--cluster',
      'prod',
      '-o',
      'json',
    ]);
    const data = parse(json.stdout) as { ok: boolean; files: string[] };
    assert.equal(data.ok, true);
    assert.equal(data.files.length, 15);
  });

  it('--check fails with the code, the file and what is wrong', async () => {
    const r = await molt(['pki', 'kubernetes', '--check', out, '--cluster', 'staging']);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /^error MOLT_KUBE_PKI_INVALID: .*ca\.crt: is the CA of the cluster prod, not of this cluster/,
    );
    const key = join(out, 'pki', 'front-proxy-client.key');
    await chmod(key, 0o640);
    try {
      const exposed = await molt(['pki', 'kubernetes', '--check', out, '--cluster', 'prod']);
      assert.equal(exposed.code, 1);
      assert.ok(
        exposed.stderr.startsWith(`error MOLT_KUBE_PKI_INVALID: ${key}: holds a private key`),
        exposed.stderr,
      );
      assert.match(exposed.stderr, /hint: chmod 600 /);
    } finally {
      await chmod(key, 0o600);
    }
  });

  it('refuses a non-empty --out unless --force', async () => {
    const args = [
      'pki',
      'kubernetes',
      '--cluster',
      'prod',
      '--out',
      out,
      '--server',
      'https://cp:6443',
    ];
    const r = await molt(args);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error MOLT_KUBE_PKI_INVALID: .* is not empty/);
    assert.match(r.stderr, /--force/);
    assert.equal((await molt([...args, '--force'])).code, 0);
    assert.equal((await molt(['pki', 'kubernetes', '--check', out, '--cluster', 'prod'])).code, 0);
  });

  it('refuses bad flags with MOLT_BAD_FLAG naming the flag and the value, and writes nothing', async () => {
    const dir = join(tmp.path, 'bad');
    const base = [
      'pki',
      'kubernetes',
      '--cluster',
      'prod',
      '--out',
      dir,
      '--server',
      'https://cp:6443',
    ];
    for (const [extra, pattern] of [
      [['--san', 'cp-1.lab'], /--san cp-1\.lab must be IP:<address> or DNS:<name>/],
      [['--san', 'IP:10.0.0.300'], /--san IP:10\.0\.0\.300 is not an IP address after IP:/],
      [['--service-cidr', '10.96.0.0'], /--service-cidr 10\.96\.0\.0 is not a CIDR/],
      [
        ['--service-cidr', '10.0.0.0/8'],
        /--service-cidr 10\.0\.0\.0\/8 must have a prefix length from \/12 to \/30/,
      ],
      [['--cluster', 'Prod!'], /--cluster Prod! must be 1-63 lower-case letters/],
      [['--server', 'http://cp:6443'], /--server http:\/\/cp:6443 must be an https:\/\/ URL/],
      [['--days', '0'], /--days must be at least 1/],
    ] as const) {
      const r = await molt([...base, ...extra]);
      assert.equal(r.code, 1, extra.join(' '));
      assert.match(r.stderr, /^error MOLT_BAD_FLAG: /, extra.join(' '));
      assert.match(r.stderr, pattern);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack');
    }
    await assert.rejects(stat(dir), { code: 'ENOENT' }, 'nothing written');
  });

  it('needs --out with --server, or --check alone', async () => {
    const none = await molt(['pki', 'kubernetes', '--cluster', 'prod']);
    assert.match(none.stderr, /^error MOLT_BAD_FLAG: give --out DIR to make a PKI, or --check DIR/);
    const noServer = await molt([
      'pki',
      'kubernetes',
      '--cluster',
      'prod',
      '--out',
      join(tmp.path, 'x'),
    ]);
    assert.match(noServer.stderr, /^error MOLT_BAD_FLAG: --out needs --server URL/);
    const both = await molt([
      'pki',
      'kubernetes',
      '--cluster',
      'prod',
      '--check',
      out,
      '--out',
      out,
    ]);
    assert.match(both.stderr, /^error MOLT_BAD_FLAG: --check takes only --cluster/);
    for (const r of [none, noServer, both]) assert.equal(r.code, 1);
  });

  it('is listed in `molt pki --help`, with its flags in its own help', async () => {
    const pki = await molt(['pki', '--help']);
    assert.match(pki.stdout, /^ {2}kubernetes\b/m);
    const own = await molt(['pki', 'kubernetes', '--help']);
    for (const flag of [
      '--cluster',
      '--out',
      '--server',
      '--san',
      '--service-cidr',
      '--dns-domain',
      '--days',
      '--force',
      '--check',
    ])
      assert.ok(own.stdout.includes(flag), flag);
  });
});
