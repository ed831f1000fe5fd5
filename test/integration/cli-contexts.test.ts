// SPDX-License-Identifier: Apache-2.0
// Issue 17 §2 as a newcomer meets it, against the real `molt operator` process (in-memory store)
// reading a real registry, with machine w-1's agent API (fake service) on loopback: certificates
// from `molt pki`, a context written by `molt pki issue --context`, and then — with no MOLT_*
// variable at all, only MOLT_CONFIG pointing at a temp file — `molt rollout list`, the rollout by a
// prefix of its id, `molt node status w-1` by name through the operator's inventory, `molt
// history`, `molt plan` and `molt machine list` from a real `molt` process.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { createAgentApi, type AgentApi } from '../../src/agent/api/server.ts';
import { createFakeAgentService, sampleStatus } from '../../src/agent/api/service.fake.ts';
import { createMemoryJournalStore } from '../../src/agent/ports/journal-store.fake.ts';
import { memoryIo } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import { createRegistryClient, pushImage } from '../../src/oci/index.ts';
import {
  eventually,
  startProcess,
  tempDir,
  type ManagedProcess,
} from '../../src/platform/process/managed-process.ts';
import { startRegistry, type RunningRegistry } from '../../src/testkit/registry-process.ts';
import { releaseImage } from './discovery-fixtures.ts';

const run = promisify(execFile);
const bin = join(import.meta.dirname, '../../src/bin/molt.ts');

describe('molt with a context and names, against a real operator', () => {
  let dir: { path: string; remove: () => Promise<void> };
  let registry: RunningRegistry;
  let agent: AgentApi;
  let operator: ManagedProcess;
  let url = '';
  const file = (name: string): string => join(dir.path, name);
  /** The only variable the CLI gets: where its config file is. */
  const env = (): Record<string, string> => ({ MOLT_CONFIG: file('cli/config.yaml') });

  async function molt(args: string[]) {
    const io = memoryIo(env());
    const code = await main(args, io);
    return { code, stdout: io.stdout(), stderr: io.stderr() };
  }
  const ok = async (args: string[]): Promise<string> => {
    const r = await molt(args);
    assert.equal(r.code, 0, `molt ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };

  before(async () => {
    dir = await tempDir('cli-contexts');
    const pki = file('pki');
    await ok(['pki', 'init', '--dir', pki]);
    for (const [role, name, ...san] of [
      ['node', 'operator-1', '--san', '127.0.0.1'],
      ['operator', 'operator-1'],
      ['node', 'w-1', '--san', '127.0.0.1'],
    ] as const)
      await ok([
        'pki',
        'issue',
        '--ca-dir',
        pki,
        '--role',
        role,
        '--name',
        name,
        ...san,
        '--out',
        file(role),
      ]);
    agent = await createAgentApi({
      service: createFakeAgentService({ ...sampleStatus(), node: 'w-1' }),
      journal: createMemoryJournalStore(),
      tls: {
        ca: await readFile(join(pki, 'ca.pem'), 'utf8'),
        cert: await readFile(file('node/w-1.pem'), 'utf8'),
        key: await readFile(file('node/w-1.key'), 'utf8'),
      },
    });
    registry = await startRegistry();
    const client = createRegistryClient({ registry: registry.host, insecure: true });
    await pushImage(client, 'molt/installer', ['1.1.0'], releaseImage());
    await writeFile(
      file('fleet.yaml'),
      stringify({
        pools: [{ name: 'workers', channel: 'stable' }],
        machines: [
          {
            id: 'w-1',
            role: 'worker',
            pool: 'workers',
            endpoint: agent.url,
            labels: { zone: 'a' },
          },
        ],
      }),
    );
    await writeFile(
      file('operator.yaml'),
      stringify({
        registry: registry.host,
        repository: 'molt/installer',
        insecure: true,
        fleet: 'fleet.yaml',
        pki: {
          ca: 'pki/ca.pem',
          cert: 'operator/operator-1.pem',
          key: 'operator/operator-1.key',
          serverCert: 'node/operator-1.pem',
          serverKey: 'node/operator-1.key',
        },
        store: 'memory',
        id: 'operator-1',
        interval: '1s',
        listen: { host: '127.0.0.1', port: 0 },
      }),
    );
    operator = startProcess('molt operator', process.execPath, [
      bin,
      'operator',
      '--config',
      file('operator.yaml'),
    ]);
    url =
      (await operator.waitFor(/^molt operator: serving (https:\/\/127\.0\.0\.1:\d+)$/m))[1] ?? '';
  });
  after(async () => {
    await operator.stop();
    await agent.close();
    await registry.stop();
    await dir.remove();
  });

  it('says no operator is configured before there is a context', async () => {
    const r = await molt(['rollout', 'list']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error MOLT_NO_ENDPOINT: no operator is configured\n/);
  });

  it('stores a context when issuing a person’s certificate', async () => {
    const out = await ok([
      ...['pki', 'issue', '--ca-dir', file('pki'), '--role', 'operator', '--name', 'alice'],
      ...['--out', file('alice'), '--context', 'fleet', '--operator', url],
    ]);
    assert.match(out, /^context fleet saved in .*config\.yaml: https:.* \(the current context\)$/m);
  });

  it('lists rollouts and finds one by a prefix of its id, with no MOLT_* variable', async () => {
    const list = await eventually(
      async () => {
        const out = await ok(['rollout', 'list']);
        assert.match(out, /^workers-1\.1\.0-[0-9a-f]{8} +workers +1\.1\.0/m);
        return out;
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    const id = /^(workers-1\.1\.0-[0-9a-f]{8})/m.exec(list)?.[1] ?? '';
    const status = await ok(['rollout', 'status', 'workers-1.1']);
    assert.match(status, new RegExp(`^rollout: +${id.replaceAll('.', '\\.')}$`, 'm'));
    const history = await ok(['history', '--rollout', 'workers-1.1']);
    assert.match(history, new RegExp(`rollout-created +${id.replaceAll('.', '\\.')} +- +operator`));
  });

  it('reaches a machine’s agent by its name, through the operator’s inventory', async () => {
    const status = await ok(['node', 'status', 'w-1']);
    assert.match(status, /^node: +w-1 \(worker\)$/m);
    const typo = await molt(['node', 'status', 'w1']);
    assert.match(
      typo.stderr,
      /^error MOLT_UNKNOWN_MACHINE: .* manages no machine w1; did you mean w-1\?/,
    );
  });

  it('asks the operator for its plan', async () => {
    const plan = await ok(['plan']);
    assert.match(plan, new RegExp(`^plan of the operator at ${url} at `));
    assert.match(plan, /^next releases:\nPOOL +CURRENT +NEXT/m);
  });

  it('ends --watch and --follow on ctrl-C with exit 0, the event stream closed at once', async () => {
    for (const args of [
      ['rollout', 'list', '--watch'],
      ['history', '--follow'],
    ]) {
      const child = spawn(process.execPath, [bin, ...args], {
        env: { PATH: process.env['PATH'] ?? '', ...env() },
      });
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      await eventually(() => {
        assert.match(out, /workers-1\.1\.0-/);
        return Promise.resolve();
      });
      const at = performance.now();
      child.kill('SIGINT');
      assert.equal(await exited, 0, `molt ${args.join(' ')}: ${out}`);
      assert.ok(performance.now() - at < 3000, 'it did not wait for the stream to end');
    }
  });

  it('works the same from a real molt process with only MOLT_CONFIG set', async () => {
    const { stdout } = await run(process.execPath, [bin, 'machine', 'list', '-l', 'zone=a'], {
      env: { PATH: process.env['PATH'] ?? '', ...env() },
    });
    assert.match(stdout, /^w-1 +workers +worker +1\.0\.0 /m);
  });
});
