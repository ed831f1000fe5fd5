// SPDX-License-Identifier: Apache-2.0
// The systemd services by name with an injected systemctl and journal reader (no machine here runs
// systemd as PID 1); journalctl itself through a stand-in script, so the child process, its
// arguments and its end on abort are real.
import assert from 'node:assert/strict';
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../../core/errors.ts';
import { tempDir } from '../../../platform/process/managed-process.ts';
import type { Services } from '../../ports/services.ts';
import type { Systemctl } from '../systemd-units/systemctl.ts';
import {
  createJournalReader,
  createSystemdServiceControl,
  parseShow,
  serviceNameOf,
} from './index.ts';

const show = `Id=etcd.service
MainPID=812
ActiveState=active
ActiveEnterTimestamp=@1764208851

Id=molt-kube-apiserver.service
MainPID=0
ActiveState=activating
SubState=auto-restart
ActiveEnterTimestamp=n/a
`;

function fakes(installed = ['etcd.service', 'molt-kube-apiserver.service']) {
  const calls: string[] = [];
  const systemctl: Systemctl = {
    run(args) {
      calls.push(`systemctl ${args.join(' ')}`);
      return Promise.resolve({ code: 0, stdout: show, stderr: '', timedOut: false });
    },
  };
  const unit = (u: string): Services & { units(): Promise<readonly string[]> } => ({
    units: () => Promise.resolve(installed.includes(u) ? [u] : []),
    running: () => Promise.resolve([]),
    startAll: () => {
      calls.push(`start ${u}`);
      return Promise.resolve();
    },
    stopAll: () => {
      calls.push(`stop ${u}`);
      return Promise.resolve();
    },
  });
  const journal = (args: readonly string[]) => {
    calls.push(`journalctl ${args.join(' ')}`);
    return Readable.from(['a', 'b']) as AsyncIterable<string>;
  };
  const control = createSystemdServiceControl({
    units: ['etcd.service', 'molt-kube-apiserver.service', 'containerd.service'].map((u) => ({
      name: serviceNameOf(u),
      unit: u,
      service: unit(u),
    })),
    systemctl,
    journal,
  });
  return { control, calls };
}

describe('systemd service control', () => {
  it('names units as molt shows them', () => {
    assert.equal(serviceNameOf('etcd.service'), 'etcd');
    assert.equal(serviceNameOf('molt-kube-scheduler.service'), 'kube-scheduler');
    assert.equal(serviceNameOf('containerd.service'), 'containerd');
    assert.deepEqual(
      parseShow(show).map((b) => b['Id']),
      ['etcd.service', 'molt-kube-apiserver.service'],
    );
  });

  it('lists the installed units from one systemctl show: running, main PID, since (a unit waiting to restart its exited process is not running)', async () => {
    const { control, calls } = fakes();
    assert.deepEqual(await control.list(), [
      { name: 'etcd', running: true, pid: 812, since: new Date(1764208851_000).toISOString() },
      { name: 'kube-apiserver', running: false },
    ]);
    assert.deepEqual(
      calls.filter((c) => c.startsWith('systemctl')),
      [
        'systemctl show --timestamp=unix -p Id -p ActiveState -p SubState -p MainPID -p ActiveEnterTimestamp etcd.service molt-kube-apiserver.service',
      ],
    );
  });

  it('starts and stops through the composed services, and refuses a unit the machine lacks', async () => {
    const { control, calls } = fakes();
    await control.restart('kube-apiserver');
    await control.stop('etcd');
    assert.deepEqual(
      calls.filter((c) => !c.startsWith('systemctl')),
      [
        'stop molt-kube-apiserver.service',
        'start molt-kube-apiserver.service',
        'stop etcd.service',
      ],
    );
    await assert.rejects(control.start('containerd'), { code: ErrorCode.ServiceNotFound });
  });

  it('reads the journal of the unit, following with -f', async () => {
    const { control, calls } = fakes();
    const lines: string[] = [];
    for await (const l of await control.logs('etcd', {
      tail: 50,
      follow: true,
      signal: new AbortController().signal,
    }))
      lines.push(l);
    assert.deepEqual(lines, ['a', 'b']);
    assert.deepEqual(
      calls.filter((c) => c.startsWith('journalctl')),
      ['journalctl -u etcd.service -n 50 -o cat --no-pager -f'],
    );
  });
});

describe('journalctl as a line stream (stand-in script)', () => {
  let dir: { path: string; remove(): Promise<void> };
  let script: string;
  before(async () => {
    dir = await tempDir('journal-reader');
    script = join(dir.path, 'journalctl');
    await writeFile(script, '#!/bin/sh\necho "args: $*"\necho second\nexec sleep 30\n');
    await chmod(script, 0o755);
  });
  after(async () => {
    await dir.remove();
  });

  it('yields the lines as they come and ends the child when the reader stops', async () => {
    const stop = new AbortController();
    const seen: string[] = [];
    const started = performance.now();
    for await (const line of createJournalReader(script)(
      ['-u', 'etcd.service', '-f'],
      stop.signal,
    )) {
      seen.push(line);
      if (seen.length === 2) stop.abort();
    }
    assert.deepEqual(seen, ['args: -u etcd.service -f', 'second']);
    assert.ok(performance.now() - started < 10_000, 'the sleeping child was ended');
  });

  it('is MOLT_TOOL_MISSING without journalctl', async () => {
    const read = createJournalReader(join(dir.path, 'none'));
    const lines = read([], new AbortController().signal)[Symbol.asyncIterator]();
    await assert.rejects(lines.next(), { code: ErrorCode.ToolMissing });
  });
});
