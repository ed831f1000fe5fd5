// SPDX-License-Identifier: Apache-2.0
// `molt pki dashboard-token`: a fresh token each time, printed once, and a config line the
// operator's dashboard config accepts whose hash is the token's.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { DashboardConfig } from '../../../protocol/dashboard-config.ts';
import { memoryIo } from '../../io.ts';
import { main } from '../../main.ts';

async function molt(args: string[]) {
  const io = memoryIo();
  const code = await main(args, io);
  return { code, stdout: io.stdout(), stderr: io.stderr() };
}

describe('molt pki dashboard-token', () => {
  it('prints a new token and the dashboard.users line holding only its sha256', async () => {
    const r = await molt(['pki', 'dashboard-token', '--name', 'alice', '--role', 'operator']);
    assert.equal(r.code, 0, r.stderr);
    const token = /^ {2}([\w-]{43})$/m.exec(r.stdout)?.[1] ?? '';
    const line = /^ {2}(- \{name: .*\})$/m.exec(r.stdout)?.[1] ?? '';
    const sha = createHash('sha256').update(token).digest('hex');
    assert.equal(line, `- {name: alice, role: operator, tokenSha256: ${sha}}`);
    const config = DashboardConfig.parse({ listen: { port: 8080 }, users: parse(line) as unknown });
    assert.deepEqual(config.users[0], { name: 'alice', role: 'operator', tokenSha256: sha });
    const again = await molt(['pki', 'dashboard-token', '--name', 'alice', '--role', 'operator']);
    assert.doesNotMatch(again.stdout, new RegExp(token));
  });

  it('answers JSON with -o json, and refuses a role the dashboard does not know', async () => {
    const r = await molt([
      'pki',
      'dashboard-token',
      '--name',
      'ada',
      '--role',
      'admin',
      '-o',
      'json',
    ]);
    const body = JSON.parse(r.stdout) as { token: string; tokenSha256: string; role: string };
    assert.equal(body.role, 'admin');
    assert.equal(body.tokenSha256, createHash('sha256').update(body.token).digest('hex'));
    const bad = await molt(['pki', 'dashboard-token', '--name', 'x', '--role', 'root']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /MOLT_BAD_FLAG: --role must be viewer, operator or admin/);
  });
});
