// SPDX-License-Identifier: Apache-2.0
// `molt node …` in-process (memoryIo) against a real agent API over mutual TLS.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createFakeAgentService } from '../../../agent/api/service.fake.ts';
import { createAgentApi, type AgentApi } from '../../../agent/api/server.ts';
import { createMemoryJournalStore } from '../../../agent/ports/journal-store.fake.ts';
import { ErrorCode, MoltError, type AgentEvent } from '../../../protocol/index.ts';
import { freePort } from '../../../platform/process/free-port.ts';
import { eventually, tempDir } from '../../../platform/process/managed-process.ts';
import { memoryIo } from '../../io.ts';
import { main } from '../../main.ts';
import { createCa, issueCertificate } from '../../../platform/pki/certificates.ts';

const dayMs = 86_400_000;

describe('molt node', () => {
  const service = createFakeAgentService();
  const journal = createMemoryJournalStore();
  const files: Record<string, string> = {};
  let dir: { path: string; remove: () => Promise<void> };
  let api: AgentApi;
  let serverTls: { ca: string; cert: string; key: string };
  let port: number;

  before(async () => {
    dir = await tempDir('node-cli');
    const ca = await createCa();
    const foreign = await createCa({ name: 'elsewhere' });
    const pairs = {
      operator: await issueCertificate({ ca, role: 'operator', name: 'alice' }),
      node: await issueCertificate({ ca, role: 'node', name: 'node-9' }),
      foreign: await issueCertificate({ ca: foreign, role: 'admin', name: 'mallory' }),
      expired: await issueCertificate({
        ca,
        role: 'admin',
        name: 'old',
        now: new Date(Date.now() - 30 * dayMs),
        days: 1,
      }),
    };
    for (const [name, pair] of Object.entries(pairs)) {
      files[`${name}.pem`] = join(dir.path, `${name}.pem`);
      files[`${name}.key`] = join(dir.path, `${name}.key`);
      await writeFile(join(dir.path, `${name}.pem`), pair.cert);
      await writeFile(join(dir.path, `${name}.key`), pair.key, { mode: 0o600 });
    }
    files['ca'] = join(dir.path, 'ca.pem');
    files['foreign-ca'] = join(dir.path, 'foreign-ca.pem');
    files['bundle'] = join(dir.path, 'bundle.pem');
    await writeFile(files['ca'], ca.cert);
    await writeFile(files['foreign-ca'], foreign.cert);
    await writeFile(files['bundle'], ca.cert + foreign.cert);
    serverTls = { ca: ca.cert, ...(await issueCertificate({ ca, role: 'node', name: 'node-1' })) };
    port = await freePort();
    api = await createAgentApi({ service, journal, tls: serverTls, port });
  });
  after(async () => {
    await api.close();
    await dir.remove();
  });

  const as = (who: string, ca = files['ca']!) => [
    '--endpoint',
    api.url,
    '--ca',
    ca,
    '--cert',
    files[`${who}.pem`]!,
    '--key',
    files[`${who}.key`]!,
  ];

  async function molt(args: string[], env: Record<string, string> = {}) {
    const io = memoryIo(env);
    const code = await main(args, io);
    return { code, stdout: io.stdout(), stderr: io.stderr() };
  }

  const event = (
    operationId: string,
    kind: AgentEvent['kind'],
    phase: string,
    extra: Partial<AgentEvent> = {},
  ) =>
    journal.append({
      operationId,
      time: new Date().toISOString(),
      kind,
      phase,
      status: 'started',
      message: `${phase} step`,
      ...extra,
    });

  it('prints the status as a table, and as JSON', async () => {
    const table = await molt(['node', 'status', ...as('node')]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^node: +node-1 \(worker\)$/m);
    assert.match(table.stdout, /^SLOT +STATUS +VERSION +DIGEST +GENERATION +BOOT$/m);
    assert.match(table.stdout, /^A\* +ready +1\.0\.0 +aaaa +1 +committed$/m);
    const json = await molt(['node', 'status', '-o', 'json', ...as('node')]);
    assert.equal((JSON.parse(json.stdout) as { bootedSlot: string }).bootedSlot, 'A');
  });

  it('takes endpoint and certificates from the environment', async () => {
    const r = await molt(['node', 'status', '-o', 'yaml'], {
      MOLT_ENDPOINT: api.url,
      MOLT_CA: files['ca']!,
      MOLT_CERT: files['node.pem']!,
      MOLT_KEY: files['node.key']!,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^node: node-1$/m);
  });

  it('starts an upgrade with the flags as the body', async () => {
    const r = await molt([
      'node',
      'upgrade',
      '--image',
      'reg.example/os:2.0.0',
      '--no-preserve',
      '--stage',
      ...as('operator'),
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^accepted: upgrade operation op-\d+$/m);
    assert.deepEqual(service.submitted.at(-1)?.body, {
      image: 'reg.example/os:2.0.0',
      preserve: false,
      stage: true,
      force: false,
    });
  });

  it('reports busy with the running operation and how to follow it', async () => {
    const r = await molt(['node', 'reboot', ...as('operator')]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error MOLT_AGENT_BUSY: /);
    assert.match(r.stderr, /hint: wait for it: molt node events --operation op-\d+ --follow/);
    service.running = undefined;
  });

  it('holds and releases the machine on its agent, and shows the hold in the status', async () => {
    const held = await molt([
      'node',
      'hold',
      '--reason',
      'disk swap',
      '--for',
      '2h',
      ...as('operator'),
    ]);
    assert.equal(held.code, 0, held.stderr);
    assert.match(held.stdout, /^hold: until \S+Z \(in [\dhms]+\) by alice: disk swap$/m);
    assert.deepEqual(service.holdRequests.at(-1)?.body, { reason: 'disk swap', for: '2h' });
    const status = await molt(['node', 'status', ...as('node')]);
    assert.match(status.stdout, /^hold: +until \S+Z \(in [\dhms]+\) by alice: disk swap$/m);
    const json = await molt(['node', 'status', '-o', 'json', ...as('node')]);
    assert.equal(
      (JSON.parse(json.stdout) as { hold: { reason: string } }).hold.reason,
      'disk swap',
    );
    // A release says what it lifted; a second one that there was nothing to lift.
    const released = await molt(['node', 'release', ...as('operator')]);
    assert.equal(released.code, 0, released.stderr);
    assert.match(
      released.stdout,
      /^hold: none; released the hold until \S+Z \(in [\dhms]+\) by alice: disk swap\n$/,
    );
    const again = await molt(['node', 'release', '-o', 'json', ...as('operator')]);
    assert.deepEqual(JSON.parse(again.stdout), { hold: null, released: null });
    const third = await molt(['node', 'release', ...as('operator')]);
    assert.equal(third.stdout, 'hold: none; there was none to release\n');
    assert.match((await molt(['node', 'status', ...as('node')])).stdout, /^hold: +none$/m);
  });

  it('checks the hold flags before any connection, and relays a node identity’s refusal', async () => {
    const both = await molt([
      ...['node', 'hold', '--reason', 'x', '--for', '1h', '--until', '2099-01-01T00:00:00Z'],
    ]);
    assert.match(both.stderr, /MOLT_BAD_FLAG: give exactly one of --for and --until/);
    const none = await molt(['node', 'hold', '--for', '1h', ...as('operator')]);
    assert.match(none.stderr, /MOLT_BAD_FLAG: --reason is required/);
    // Named as the flag typed, before any connection (no --endpoint here), not as the API's field.
    const typo = await molt(['node', 'hold', '--reason', 'x', '--for', '2x']);
    assert.equal(
      typo.stderr,
      'error MOLT_BAD_FLAG: --for "2x" is not a duration (e.g. 30m, 2h, 1d)\n  hint: run the command with --help\n',
    );
    const until = await molt(['node', 'hold', '--reason', 'x', '--until', 'tomorrow']);
    assert.match(
      until.stderr,
      /^error MOLT_BAD_FLAG: --until "tomorrow" is not a time with a zone/,
    );
    const node = await molt(['node', 'hold', '--reason', 'x', '--for', '1h', ...as('node')]);
    assert.match(
      node.stderr,
      /^error MOLT_FORBIDDEN: node-9 \(role node\) may not call \/v1\/hold/,
    );
  });

  it('relays an upgrade refused for the hold with the agent’s code and hint', async () => {
    service.failNext = new MoltError(
      ErrorCode.MachineHeld,
      'node-1 is held until 2099-01-01T00:00:00.000Z by bob: audit',
      {
        hint: 'release it with `molt node release`, or wait',
      },
    );
    const r = await molt(['node', 'upgrade', '--image', 'reg.example/os:2.0.0', ...as('operator')]);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /^error MOLT_MACHINE_HELD: node-1 is held until 2099-01-01T00:00:00.000Z by bob: audit$/m,
    );
    assert.match(r.stderr, /hint: release it with `molt node release`/);
  });

  it('relays the agent’s refusal of a node identity', async () => {
    const r = await molt(['node', 'upgrade', '--image', 'x', ...as('node')]);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /^error MOLT_FORBIDDEN: node-9 \(role node\) may not call \/v1\/upgrade/,
    );
  });

  it('checks flags before any connection', async () => {
    assert.match(
      (await molt(['node', 'status'])).stderr,
      /^error MOLT_NO_ENDPOINT: no agent is named: give a machine or an endpoint\n {2}hint: name the machine .*--endpoint https:\/\/HOST:PORT, or set MOLT_ENDPOINT\n$/,
    );
    assert.match(
      (await molt(['node', 'status', '--endpoint', 'http://x:1'])).stderr,
      /MOLT_BAD_FLAG: --endpoint must be an https/,
    );
    assert.match(
      (await molt(['node', 'upgrade', ...as('operator')])).stderr,
      /MOLT_BAD_FLAG: --image is required/,
    );
    assert.match(
      (await molt(['node', 'status', '--endpoint', api.url, '--cert', files['node.pem']!])).stderr,
      /MOLT_BAD_FLAG: give both --cert and --key/,
    );
    assert.match(
      (await molt(['node', 'status', ...as('node', join(dir.path, 'missing.pem'))])).stderr,
      /MOLT_PKI_INVALID: cannot read CA bundle/,
    );
  });

  it('refuses an expired or foreign certificate with MOLT_TLS_REJECTED before any request', async () => {
    const expired = await molt(['node', 'reboot', ...as('expired')]);
    assert.match(
      expired.stderr,
      /^error MOLT_TLS_REJECTED: client certificate .*expired\.pem expired on /,
    );
    assert.match(expired.stderr, /hint: issue a new one/);
    const foreign = await molt(['node', 'reboot', ...as('foreign')]);
    assert.match(
      foreign.stderr,
      /^error MOLT_TLS_REJECTED: client certificate .*foreign\.pem was not issued by the CA .*\(a foreign certificate\)/,
    );
    assert.match(foreign.stderr, /hint: issue a new one/);
  });

  it('tells a CA file of another fleet from a foreign certificate: use the fleet’s CA, not a new certificate', async () => {
    // The operator's certificate is this fleet's; the CA given is not.
    const asked = service.submitted.length;
    const r = await molt(['node', 'reboot', ...as('operator', files['foreign-ca'])]);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /^error MOLT_TLS_REJECTED: the CA in .*foreign-ca\.pem is not this fleet's: it issued neither the agent's certificate at https:\/\/127\.0\.0\.1:\d+ nor your client certificate .*operator\.pem$/m,
    );
    assert.match(r.stderr, /hint: use the fleet's CA: --ca \(or MOLT_CA\) must be the ca\.pem/);
    assert.doesNotMatch(r.stderr, /issue a new one|foreign certificate/);
    assert.equal(service.submitted.length, asked, 'no reboot was asked for');
  });

  it('reports the agent’s rejection of a foreign certificate and of none at all as MOLT_TLS_REJECTED', async () => {
    // A bundle trusting both CAs passes the local check; the agent itself refuses.
    const foreign = await molt(['node', 'status', ...as('foreign', files['bundle'])]);
    assert.match(
      foreign.stderr,
      /^error MOLT_TLS_REJECTED: the agent at https:\/\/127\.0\.0\.1:\d+ refused the client certificate/,
    );
    const none = await molt(['node', 'status', '--endpoint', api.url, '--ca', files['ca']!]);
    assert.match(none.stderr, /^error MOLT_TLS_REJECTED: .*requires a client certificate/);
    assert.match(none.stderr, /hint: give a client certificate: --cert and --key/);
  });

  it('reports an agent certificate from another CA as MOLT_TLS_REJECTED: use the fleet’s CA', async () => {
    const r = await molt(['node', 'status', ...as('foreign', files['foreign-ca'])]);
    assert.match(
      r.stderr,
      /^error MOLT_TLS_REJECTED: the agent at .* presented a certificate the CA in .*foreign-ca\.pem did not issue \(\w+\): that CA is another fleet's$/m,
    );
    assert.match(r.stderr, /hint: use the fleet's CA/);
    const noCa = await molt(['node', 'status', '--endpoint', api.url]);
    assert.match(
      noCa.stderr,
      /presented a certificate no CA molt was given issued .*given with --ca/,
    );
  });

  it('reports an agent that is not there as MOLT_AGENT_UNREACHABLE', async () => {
    const closed = await freePort();
    const r = await molt([
      'node',
      'status',
      ...as('node'),
      '--endpoint',
      `https://127.0.0.1:${String(closed)}`,
    ]);
    assert.match(
      r.stderr,
      /^error MOLT_AGENT_UNREACHABLE: cannot reach the agent at https:\/\/127\.0\.0\.1:\d+: connection refused: nothing listens there \(ECONNREFUSED\)$/m,
    );
  });

  it('lists operations and replays events', async () => {
    await event('op-r', 'phase', 'Pulling');
    await event('op-r', 'result', 'Idle', { status: 'done', result: { result: 'Succeeded' } });
    const ops = await molt(['node', 'operations', ...as('node')]);
    assert.match(ops.stdout, /^op-r +\S+ +\S+ +2 +Succeeded/m);
    const events = await molt(['node', 'events', '--operation', 'op-r', ...as('node')]);
    assert.match(
      events.stdout,
      /Pulling +started +Pulling step\n.*result: Succeeded \(operation op-r\)/,
    );
    const unknown = await molt([
      'node',
      'events',
      '--operation',
      'op-typo',
      '--follow',
      ...as('node'),
    ]);
    assert.match(unknown.stderr, /^error MOLT_OPERATION_NOT_FOUND: /);
  });

  it('logs prints every journalled event of every operation, the last --tail n, as lines or NDJSON', async () => {
    await event('op-l1', 'phase', 'ReleasingMounts');
    await event('op-l1', 'error', 'ReleasingMounts', {
      status: 'failed',
      message: 'ReleaseMounts failed',
      error: { code: 'MOLT_MOUNT_BUSY', message: 'EPHEMERAL is busy' },
    });
    await event('op-l1', 'result', 'Idle', {
      status: 'failed',
      result: { result: 'Failed', reason: 'EPHEMERAL is busy' },
    });
    await event('op-l2', 'phase', 'Rebooting');
    const journalled = await journal.events();

    const json = await molt(['node', 'logs', '-o', 'json', ...as('node')]);
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(
      json.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as AgentEvent),
      journalled,
      'every event of every operation, in journal order, each once',
    );

    const table = await molt(['node', 'logs', ...as('node')]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(
      table.stdout,
      new RegExp(
        [
          String.raw`\d\d:\d\d:\d\d  ReleasingMounts +started +ReleasingMounts step`,
          String.raw`\d\d:\d\d:\d\d  ReleasingMounts +failed +ReleaseMounts failed \[MOLT_MOUNT_BUSY: EPHEMERAL is busy\]`,
          // its reason is the line above's: said once
          String.raw`\d\d:\d\d:\d\d  result: Failed \(operation op-l1\)`,
          String.raw`\d\d:\d\d:\d\d  Rebooting +started +Rebooting step\n$`,
        ].join('\n'),
      ),
    );

    const tail = await molt(['node', 'logs', '--tail', '2', '-o', 'json', ...as('node')]);
    assert.deepEqual(
      tail.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as AgentEvent).phase),
      ['Idle', 'Rebooting'],
    );
    const none = await molt(['node', 'logs', '--tail', '0', ...as('node')]);
    assert.equal(none.code, 0, none.stderr);
    assert.equal(none.stdout, '');
    assert.match(
      (await molt(['node', 'logs', '--tail', 'x', ...as('node')])).stderr,
      /MOLT_BAD_FLAG: --tail must be a number/,
    );
  });

  it('logs --follow streams events journalled after it started, until the agent goes away', async () => {
    await event('op-l3', 'phase', 'Pulling');
    const io = memoryIo();
    const running = main(
      ['node', 'logs', '--tail', '1', '--follow', '-o', 'json', ...as('node')],
      io,
    );
    const seen = (): [string, number, string][] =>
      io
        .stdout()
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as AgentEvent)
        .map((e) => [e.operationId, e.seq, e.message]);
    await eventually(
      async () => {
        await Promise.resolve();
        assert.deepEqual(seen(), [['op-l3', 1, 'Pulling step']]);
      },
      { timeoutMs: 5_000, intervalMs: 20 },
    );
    await event('op-l3', 'log', 'Pulling', { status: 'done', message: 'PullImage done' });
    await event('op-l4', 'phase', 'Rebooting');
    await eventually(
      async () => {
        await Promise.resolve();
        assert.deepEqual(seen(), [
          ['op-l3', 1, 'Pulling step'],
          ['op-l3', 2, 'PullImage done'],
          ['op-l4', 1, 'Rebooting step'],
        ]);
      },
      { timeoutMs: 5_000, intervalMs: 20 },
    );
    // Unlike `events --follow`, `logs --follow` does not reconnect: losing the agent ends it.
    await api.close();
    const code = await running;
    api = await createAgentApi({ service, journal, tls: serverTls, port });
    assert.equal(code, 1);
    assert.match(io.stderr(), /^error MOLT_AGENT_UNREACHABLE: the event stream from .*\/v1\/logs/);
    assert.equal(seen().length, 3, 'each event once, nothing after the agent went away');
  });

  it('follows an operation across the agent’s restart, printing each event once', async () => {
    await event('op-f', 'phase', 'Pulling');
    const running = molt(['node', 'events', '--operation', 'op-f', '--follow', ...as('node')]);
    await sleep(300);
    await event('op-f', 'progress', 'Pulling', {
      progress: { bytes: 50 * 1_048_576, total: 100 * 1_048_576 },
    });
    await event('op-f', 'phase', 'Rebooting');
    await sleep(200);
    // The agent goes away; events journalled meanwhile must arrive after the reconnect.
    await api.close();
    await event('op-f', 'phase', 'Rejoining');
    await sleep(700);
    api = await createAgentApi({ service, journal, tls: serverTls, port });
    await event('op-f', 'result', 'Idle', {
      status: 'done',
      result: { result: 'RolledBack', reason: 'HealthDeadline' },
    });
    const r = await running;
    assert.equal(r.code, 1, 'a rolled-back operation fails the command');
    const lines = r.stdout.trim().split('\n');
    assert.deepEqual(
      lines.map((l) => /(Pulling|Rebooting|Rejoining|result: \w+)/.exec(l)?.[1]),
      ['Pulling', 'Pulling', 'Rebooting', 'Rejoining', 'result: RolledBack'],
    );
    assert.match(lines[1]!, /50%\s+50\.0 MiB \/ 100\.0 MiB/);
    assert.match(
      r.stderr,
      /lost the agent \(MOLT_AGENT_UNREACHABLE: .*\); reconnecting…\nreconnected\n/,
    );
  });

  it('upgrade --follow -o json prints one event per line until the result', async () => {
    const running = molt([
      'node',
      'upgrade',
      '--image',
      'reg/os:3',
      '--follow',
      '-o',
      'json',
      ...as('operator'),
    ]);
    await eventually(
      async () => {
        await Promise.resolve();
        assert.equal(service.running?.kind, 'upgrade');
      },
      { timeoutMs: 5_000, intervalMs: 50 },
    );
    const id = service.running!.id;
    await event(id, 'phase', 'Pulling');
    await event(id, 'result', 'Idle', { status: 'done', result: { result: 'Succeeded' } });
    const r = await running;
    assert.equal(r.code, 0, r.stderr);
    const parsed = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as AgentEvent);
    assert.deepEqual(
      parsed.map((e) => [e.operationId, e.seq, e.kind]),
      [
        [id, 1, 'phase'],
        [id, 2, 'result'],
      ],
    );
    service.running = undefined;
  });

  it('gives up following when the agent stays away past --reconnect-timeout', async () => {
    await event('op-t', 'phase', 'Rebooting');
    const closed = await freePort();
    const r = await molt([
      'node',
      'events',
      '--follow',
      '--operation',
      'op-t',
      '--reconnect-timeout',
      '500',
      ...as('node'),
      '--endpoint',
      `https://127.0.0.1:${String(closed)}`,
    ]);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /^error MOLT_TIMED_OUT: the agent at https:\/\/127\.0\.0\.1:\d+ stayed unreachable/m,
    );
  });
});
