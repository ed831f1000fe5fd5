// SPDX-License-Identifier: Apache-2.0
// `molt lab up|status|env|publish|down` end to end, as a user runs them: the detached lab
// daemon with a registry, three control-plane machines, one worker and the operator (no
// Kubernetes, to stay quick). Run as root the machines get network namespaces (the default
// `--network auto`), so this also covers the lab's own network plumbing; `down` leaves nothing.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { runLab } from '../../../src/lab/main.ts';
import { readLabState, type LabState } from '../../../src/lab/state.ts';
import { tempDir } from '../../../src/platform/process/managed-process.ts';
import { moltEntry } from './harness.ts';

const run = promisify(execFile);
const molt = [process.execPath, moltEntry];
const root = process.getuid?.() === 0;
let scratch: { path: string; remove: () => Promise<void> };
let lab: LabState;

/** The CLI config `lab up` writes its context to: in the scratch directory, never the real home. */
const cliConfig = (): string => join(scratch.path, 'molt-config.yaml');

async function labCmd(argv: readonly string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const env = { ...process.env, MOLT_CONFIG: cliConfig() };
  const io = { out: (t: string) => (out += t), err: () => undefined, env };
  const code = await runLab([...argv, '--dir', scratch.path], io, molt);
  return { code, out };
}

before(async () => {
  scratch = await tempDir('lab-commands');
  const up = await labCmd(['up', '--workers', '1', '--no-kubernetes', '--fast', '-o', 'json']);
  assert.equal(up.code, 0);
  lab = JSON.parse(up.out) as LabState;
});

after(async () => {
  if ((await readLabState(scratch.path)) !== undefined) await labCmd(['down']);
  await scratch.remove();
});

describe('molt lab', () => {
  it('comes up with four machines and the operator, and says so as JSON', async () => {
    assert.equal(lab.state, 'ready');
    assert.deepEqual(
      lab.machines.map((m) => m.id),
      ['cp-1', 'cp-2', 'cp-3', 'w-1'],
    );
    assert.equal(lab.network?.mode, root ? 'netns' : 'loopback');
    if (root) {
      const hosts = new Set(lab.machines.map((m) => new URL(m.endpoint).hostname));
      assert.equal(hosts.size, 4, 'each machine at an address of its own');
    }
    const page = await fetch(lab.operator.dashboard);
    assert.equal(page.status, 200);
  });

  it('lets the lab user sign in to the dashboard with the token it says where to find', async () => {
    assert.equal(lab.operator.dashboardUser, 'lab');
    const token = (await readFile(lab.operator.dashboardToken ?? '', 'utf8')).trim();
    assert.equal((await stat(lab.operator.dashboardToken ?? '')).mode & 0o777, 0o600);
    const origin = new URL(lab.operator.dashboard).origin;
    const res = await fetch(new URL('/v1/session', origin), {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin },
      body: JSON.stringify({ token }),
    });
    assert.equal(res.status, 200);
    assert.deepEqual(((await res.json()) as { user: unknown }).user, {
      name: 'lab',
      role: 'admin',
    });
    assert.match(
      (await labCmd(['status'])).out,
      /sign in as lab \(admin\) with the token in .*dashboard\.token/,
    );
  });

  it('refuses a second lab in the same directory with MOLT_LAB_RUNNING', async () => {
    await assert.rejects(labCmd(['up', '--no-kubernetes']), /already running/);
  });

  it('shows the fleet in status, as text and as JSON', async () => {
    const text = await labCmd(['status']);
    assert.match(text.out, /w-1\s+worker\s+workers/);
    const json = JSON.parse((await labCmd(['status', '-o', 'json'])).out) as {
      fleet: { id: string }[];
    };
    assert.equal(json.fleet.length, 4);
  });

  it('prints the environment that points molt at the lab, as shell and as JSON', async () => {
    const shell = (await labCmd(['env'])).out;
    assert.match(shell, /^export MOLT_OPERATOR=https:\/\//m);
    const vars = JSON.parse((await labCmd(['env', '-o', 'json'])).out) as Record<string, string>;
    assert.equal(vars['MOLT_OPERATOR'], lab.operator.api);
    const { stdout } = await run(process.execPath, [moltEntry, 'machine', 'list', '-o', 'json'], {
      env: { ...process.env, ...vars },
    });
    assert.equal((JSON.parse(stdout) as unknown[]).length, 4, 'molt machine list reaches the lab');
  });

  it('writes the lab context: molt reaches the lab with no MOLT_* variables', async () => {
    const { stdout } = await run(process.execPath, [moltEntry, 'machine', 'list', '-o', 'json'], {
      env: { PATH: process.env['PATH'] ?? '', MOLT_CONFIG: cliConfig() },
    });
    assert.equal((JSON.parse(stdout) as unknown[]).length, 4);
    const current = await run(process.execPath, [moltEntry, 'config', 'current-context'], {
      env: { PATH: process.env['PATH'] ?? '', MOLT_CONFIG: cliConfig() },
    });
    assert.equal(current.stdout, 'lab\n');
    // The context acts as the lab's person, not as the operator: the history can tell them apart.
    const env = { PATH: process.env['PATH'] ?? '', MOLT_CONFIG: cliConfig() };
    const hold = ['machine', 'hold', 'w-1', '--reason', 'context check', '--for', '1h'];
    const held = await run(process.execPath, [moltEntry, ...hold], { env });
    assert.match(
      held.stdout,
      /^machine w-1: held until \S+Z \(in [\dhms]+\) by lab-admin: context check$/m,
    );
    await run(process.execPath, [moltEntry, 'machine', 'release', 'w-1'], { env });
  });

  it('publishes a release the operator then rolls out to the worker', async () => {
    const r = await labCmd(['publish', '1.1.0', '--channels', 'beta', '-o', 'json']);
    const published = JSON.parse(r.out) as { image: string; digest: string };
    assert.match(published.digest, /^sha256:[0-9a-f]{64}$/);
    assert.ok(published.image.endsWith('/molt/installer:1.1.0'));
    const deadline = Date.now() + 120_000;
    for (;;) {
      const s = JSON.parse((await labCmd(['status', '-o', 'json'])).out) as {
        fleet: { id: string; observed?: { version?: string } }[];
      };
      if (s.fleet.find((m) => m.id === 'w-1')?.observed?.version === '1.1.0') break;
      assert.ok(Date.now() < deadline, 'w-1 reached 1.1.0 within 2 min');
      await new Promise((r) => setTimeout(r, 1000));
    }
  });

  it('stops everything on down, network included', async () => {
    const down = JSON.parse((await labCmd(['down', '-o', 'json'])).out) as {
      stopped: boolean;
      contextRemoved?: string;
    };
    assert.equal(down.stopped, true);
    assert.equal(down.contextRemoved, 'lab');
    assert.doesNotMatch(await readFile(cliConfig(), 'utf8'), /lab/, 'the lab context is gone');
    assert.equal(await readLabState(scratch.path), undefined);
    for (const m of lab.network?.namespaces ?? []) {
      const list = (await run('ip', ['netns', 'list'])).stdout;
      assert.ok(!list.includes(m), `${m} is gone`);
    }
    await assert.rejects(labCmd(['status']), /no lab is running/);
  });

  it('comes up again in the same directory after down (the old fleet is replaced)', async () => {
    const again = await labCmd(['up', '--workers', '1', '--no-kubernetes', '--fast', '-o', 'json']);
    assert.equal(again.code, 0);
    const second = JSON.parse(again.out) as LabState;
    assert.equal(second.machines.length, 4);
    assert.equal((await labCmd(['down'])).code, 0);
  });

  it('stops a lab that is still starting, and leaves no process of it behind', async () => {
    const log = join(scratch.path, 'logs', 'lab.log');
    const before = (await readFile(log, 'utf8')).length;
    const up = labCmd(['up', '--workers', '1', '--no-kubernetes', '--fast']);
    up.catch(() => undefined);
    // Down while the machines start: no lab.json yet, only the daemon.
    for (;;) {
      const fresh = (await readFile(log, 'utf8')).slice(before);
      if (fresh.includes('molt lab: machines: registry')) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(await readLabState(scratch.path), undefined, 'not up yet');
    await assert.rejects(labCmd(['status']), /the lab in .* is still starting \(PID \d+\)/);
    const down = await labCmd(['down']);
    assert.equal(down.code, 0);
    assert.match(down.out, /stopped before it was up/);
    await assert.rejects(up, /the lab did not come up/);
    assert.match(await readFile(log, 'utf8'), /stopped before the lab was up/);
    const left = await run('pgrep', ['-f', scratch.path]).then(
      (r) => r.stdout.trim(),
      () => '',
    );
    assert.equal(left, '', 'no process of the lab runs on');
    await assert.rejects(labCmd(['status']), /no lab is running/);
  });
});
