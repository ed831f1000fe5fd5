// SPDX-License-Identifier: Apache-2.0
// On a real machine etcd.service reads molt's flags from `state/etcd.env` (systemd-units'
// etcd-unit.ts): prove the real etcd (Debian's 3.4) starts from that environment alone, no flags,
// as systemd would run it with the drop-in's `EnvironmentFile=` and a bare `ExecStart=`.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { it } from 'node:test';
import { etcdArgs } from '../../src/agent/adapters/etcd-service/index.ts';
import { etcdEnvironment } from '../../src/agent/adapters/systemd-units/etcd-unit.ts';
import { etcdEnv } from '../../src/platform/etcd/process-env.ts';
import { freePort } from '../../src/platform/process/free-port.ts';
import { eventually, tempDir } from '../../src/platform/process/managed-process.ts';

it('etcd starts from the environment file molt writes for etcd.service', async () => {
  const dir = await tempDir('etcd-env');
  const peerUrl = `http://127.0.0.1:${await freePort()}`;
  const clientUrl = `http://127.0.0.1:${await freePort()}`;
  const file = etcdEnvironment(
    await etcdArgs({
      root: dir.path,
      name: 'cp-env',
      peerUrl,
      clientUrl,
      initialCluster: `cp-env=${peerUrl}`,
      dataDir: join(dir.path, 'ephemeral', 'etcd'),
    }),
  );
  // systemd's EnvironmentFile= syntax for these lines is plain KEY=value.
  const env = Object.fromEntries(
    file
      .trim()
      .split('\n')
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  const etcd = spawn('/usr/bin/etcd', [], { env: { ...etcdEnv(), ...env }, stdio: 'ignore' });
  try {
    const health = await eventually(
      async () => {
        const res = await fetch(`${clientUrl}/health`);
        const body = (await res.json()) as { health?: string };
        assert.equal(body.health, 'true');
        return body;
      },
      { timeoutMs: 20_000, intervalMs: 200 },
    );
    assert.equal(health.health, 'true');
    // etcd's gRPC gateway: the member carries the name from ETCD_NAME.
    const list = await fetch(`${clientUrl}/v3/cluster/member/list`, { method: 'POST', body: '{}' });
    const members = (await list.json()) as { members: { name: string }[] };
    assert.deepEqual(
      members.members.map((m) => m.name),
      ['cp-env'],
    );
  } finally {
    const gone = new Promise((r) => etcd.once('exit', r));
    etcd.kill('SIGTERM');
    await gone;
    await dir.remove();
  }
});
