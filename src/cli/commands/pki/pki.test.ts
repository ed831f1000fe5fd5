// SPDX-License-Identifier: Apache-2.0
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { TLSSocket } from 'node:tls';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Agent, fetch } from 'undici';
import { tempDir } from '../../../platform/process/managed-process.ts';
import { memoryIo } from '../../io.ts';
import { main } from '../../main.ts';

const run = promisify(execFile);

async function molt(args: string[], env: Record<string, string> = {}) {
  const io = memoryIo(env);
  const code = await main(args, io);
  return { code, stdout: io.stdout(), stderr: io.stderr() };
}

describe('molt pki', () => {
  let dir: { path: string; remove: () => Promise<void> };
  let ca: string;
  before(async () => {
    dir = await tempDir('pki');
    ca = join(dir.path, 'ca');
    const r = await molt(['pki', 'init', '--dir', ca]);
    assert.equal(r.code, 0, r.stderr);
  });
  after(() => dir.remove());

  it('init writes a 10-year EC P-256 CA with a private key readable only by its owner', async () => {
    const cert = new X509Certificate(await readFile(join(ca, 'ca.pem')));
    assert.equal(cert.ca, true);
    assert.equal(cert.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
    const years =
      (cert.validToDate.getTime() - cert.validFromDate.getTime()) / (365.25 * 86_400_000);
    assert.ok(years > 9.9 && years < 10.1, `validity ${String(years)} years`);
    assert.equal((await stat(join(ca, 'ca.key'))).mode & 0o777, 0o600);
    const { stdout } = await run('openssl', ['x509', '-in', join(ca, 'ca.pem'), '-noout', '-text']);
    assert.match(stdout, /CA:TRUE/);
    assert.match(stdout, /Certificate Sign/);
  });

  it('init refuses to overwrite an existing CA', async () => {
    const before = await readFile(join(ca, 'ca.pem'), 'utf8');
    const r = await molt(['pki', 'init', '--dir', ca]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error MOLT_PKI_INVALID: .*ca\.pem already exists/);
    assert.equal(await readFile(join(ca, 'ca.pem'), 'utf8'), before);
  });

  it('issue writes a node certificate openssl verifies, with the role, EKUs and loopback names', async () => {
    const r = await molt([
      'pki',
      'issue',
      '--ca-dir',
      ca,
      '--role',
      'node',
      '--name',
      'node-1',
      '--san',
      '10.0.0.7',
      '--san',
      'node-1.lab',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /subject: +CN=node-1, O=molt:node/);
    const pem = join(ca, 'node-1.pem');
    const verify = await run('openssl', ['verify', '-CAfile', join(ca, 'ca.pem'), pem]);
    assert.match(verify.stdout, /node-1\.pem: OK/);
    const { stdout } = await run('openssl', ['x509', '-in', pem, '-noout', '-text']);
    assert.match(stdout, /Subject: CN ?= ?node-1, O ?= ?molt:node/);
    assert.match(stdout, /TLS Web Server Authentication, TLS Web Client Authentication/);
    for (const san of [
      'DNS:node-1',
      'DNS:localhost',
      'IP Address:127.0.0.1',
      'IP Address:10.0.0.7',
      'DNS:node-1.lab',
    ]) {
      assert.ok(stdout.includes(san), `missing ${san}`);
    }
    assert.equal((await stat(join(ca, 'node-1.key'))).mode & 0o777, 0o600);
    const days =
      (new X509Certificate(await readFile(pem)).validToDate.getTime() - Date.now()) / 86_400_000;
    assert.ok(days > 364 && days <= 365.01);
  });

  it('issued certificates complete a real mutual-TLS handshake', async () => {
    const out = join(dir.path, 'people');
    assert.equal(
      (
        await molt([
          'pki',
          'issue',
          '--ca-dir',
          ca,
          '--role',
          'operator',
          '--name',
          'alice',
          '--days',
          '30',
          '--out',
          out,
        ])
      ).code,
      0,
    );
    const read = (p: string) => readFile(p, 'utf8');
    const server = createServer(
      {
        ca: await read(join(ca, 'ca.pem')),
        cert: await read(join(ca, 'node-1.pem')),
        key: await read(join(ca, 'node-1.key')),
        requestCert: true,
        rejectUnauthorized: true,
      },
      (req, res) => {
        const peer = req.socket instanceof TLSSocket ? req.socket.getPeerCertificate() : undefined;
        res.end(`${String(peer?.subject.CN)} ${String(peer?.subject.O)}`);
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const agent = new Agent({
      connect: {
        ca: await read(join(ca, 'ca.pem')),
        cert: await read(join(out, 'alice.pem')),
        key: await read(join(out, 'alice.key')),
      },
    });
    try {
      const address = server.address() as AddressInfo;
      const res = await fetch(`https://127.0.0.1:${String(address.port)}/`, { dispatcher: agent });
      assert.equal(await res.text(), 'alice molt:operator');
    } finally {
      await agent.close();
      server.close();
    }
  });

  it('an operator certificate cannot serve: a client of the fleet CA refuses it as an agent', async () => {
    const out = join(dir.path, 'impostor');
    assert.equal(
      (
        await molt([
          'pki',
          'issue',
          '--ca-dir',
          ca,
          '--role',
          'operator',
          '--name',
          'mallory',
          '--san',
          '127.0.0.1',
          '--out',
          out,
        ])
      ).code,
      0,
    );
    const read = (p: string) => readFile(p, 'utf8');
    const server = createServer(
      { cert: await read(join(out, 'mallory.pem')), key: await read(join(out, 'mallory.key')) },
      (_req, res) => res.end('agent'),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const agent = new Agent({ connect: { ca: await read(join(ca, 'ca.pem')) } });
    try {
      const address = server.address() as AddressInfo;
      await assert.rejects(
        fetch(`https://127.0.0.1:${String(address.port)}/`, { dispatcher: agent }),
        (e: Error & { cause?: Error & { code?: string } }) => {
          return /purpose/i.test(`${e.cause?.code ?? ''} ${e.cause?.message ?? ''}`);
        },
      );
    } finally {
      await agent.close();
      server.close();
    }
  });

  it('validates flags before touching any file', async () => {
    const role = await molt(['pki', 'issue', '--ca-dir', ca, '--role', 'root', '--name', 'x']);
    assert.match(role.stderr, /MOLT_BAD_FLAG: --role must be node, operator or admin/);
    const name = await molt([
      'pki',
      'issue',
      '--ca-dir',
      ca,
      '--role',
      'node',
      '--name',
      '../evil',
    ]);
    assert.match(name.stderr, /MOLT_BAD_FLAG: --name must be/);
    const san = await molt([
      'pki',
      'issue',
      '--ca-dir',
      ca,
      '--role',
      'node',
      '--name',
      'n',
      '--san',
      'not a name',
    ]);
    assert.match(san.stderr, /MOLT_BAD_FLAG: --san.* must be an IP address or a DNS name/);
    const days = await molt([
      'pki',
      'issue',
      '--ca-dir',
      ca,
      '--role',
      'node',
      '--name',
      'n',
      '--days',
      '0',
    ]);
    assert.match(days.stderr, /MOLT_BAD_FLAG: --days must be at least 1/);
  });

  it('reports a missing CA and refuses to reissue over existing files', async () => {
    const missing = await molt([
      'pki',
      'issue',
      '--ca-dir',
      join(dir.path, 'nope'),
      '--role',
      'node',
      '--name',
      'n',
    ]);
    assert.match(missing.stderr, /^error MOLT_PKI_INVALID: cannot read .*ca\.pem: ENOENT/);
    const again = await molt([
      'pki',
      'issue',
      '--ca-dir',
      ca,
      '--role',
      'node',
      '--name',
      'node-1',
    ]);
    assert.match(again.stderr, /MOLT_PKI_INVALID: .*node-1\.pem already exists/);
  });

  it('issue --context stores the certificate as a context of the CLI config', async () => {
    const env = { MOLT_CONFIG: join(dir.path, 'cli', 'config.yaml') };
    const issue = (name: string, ...more: string[]) =>
      molt(['pki', 'issue', '--ca-dir', ca, '--role', 'operator', '--name', name, ...more], env);
    const noUrl = await issue('bob', '--context', 'prod');
    assert.match(noUrl.stderr, /^error MOLT_BAD_FLAG: --context prod needs --operator URL/);
    await assert.rejects(stat(join(ca, 'bob.pem')), 'nothing issued before the flags are right');
    const first = await issue('bob', '--context', 'prod', '--operator', 'https://ops.example:8443');
    assert.equal(first.code, 0, first.stderr);
    assert.match(
      first.stdout,
      /^context prod saved in .*config\.yaml: https:\/\/ops\.example:8443 \(the current context\)$/m,
    );
    const again = await issue('carol', '--context', 'prod', '-o', 'json');
    const body = JSON.parse(again.stdout) as { cert: string; context: { operator: string } };
    assert.equal(body.context.operator, 'https://ops.example:8443', 'the context’s URL reused');
    const view = await molt(['config', 'view', '-o', 'json'], env);
    const prod = (JSON.parse(view.stdout) as { contexts: Record<string, Record<string, string>> })
      .contexts['prod'];
    assert.deepEqual(prod, {
      operator: 'https://ops.example:8443',
      cert: join(ca, 'carol.pem'),
      key: join(ca, 'carol.key'),
      ca: join(ca, 'ca.pem'),
    });
    const stray = await issue('dave', '--operator', 'https://x:1');
    assert.match(stray.stderr, /^error MOLT_BAD_FLAG: --operator needs --context NAME/);
  });
});
