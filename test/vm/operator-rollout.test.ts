// SPDX-License-Identifier: Apache-2.0
/**
 * Issue 15 §3 scenario 8: the operator rolls a release across three real VMs under a pool policy
 * (a canary, then two at a time), each really rebooting — on the lab a user runs:
 * `molt lab up --vms 3 --workers 0 --no-kubernetes`, `molt lab publish 1.1.0 --vm`,
 * `molt rollout status ID --follow`. Asserted: every VM's console shows the new slot's boot
 * marker (and GRUB's entry for the new slot on the GRUB VMs), the operator's rollout is
 * Completed 3/3, and its history shows the canary finishing before any other VM starts and never
 * more than two VMs in flight. Slow under TCG (three VMs on two cores): deadlines are generous.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { readLabStateFile, type LabState } from '../../src/lab/state.ts';
import { readSerial, serialSize } from '../../src/lab/vm/serial-log.ts';
import type {
  HistoryEventView,
  RolloutSummaryView,
  RolloutView,
} from '../../src/protocol/operator.ts';

const run = promisify(execFile);
const repoRoot = join(import.meta.dirname, '../..');
const moltBin = join(repoRoot, 'src/bin/molt.ts');
const keep = process.env['MOLT_VM_KEEP'] === '1';
const Minutes = 60_000;

/** `molt lab up` writes its context here, not into the real home's CLI config. */
const cliConfig = join(repoRoot, '.molt', 'vm-test-molt-config.yaml');

async function molt(args: readonly string[], env: Record<string, string> = {}): Promise<string> {
  const r = await run(process.execPath, [moltBin, ...args], {
    env: { ...process.env, MOLT_CONFIG: cliConfig, ...env },
    maxBuffer: 64 * 2 ** 20,
    timeout: 25 * Minutes,
  });
  return r.stdout;
}

/** `[start, end]` of each machine's upgrade, from the operator's history. */
function intervals(events: readonly HistoryEventView[]): Map<string, [number, number]> {
  const out = new Map<string, [number, number]>();
  for (const e of events) {
    if (e.machine === undefined) continue;
    const at = Date.parse(e.at);
    if (e.kind === 'machine-start') out.set(e.machine, [at, Infinity]);
    if (e.kind === 'machine-result') {
      const i = out.get(e.machine);
      if (i !== undefined) i[1] = at;
    }
  }
  return out;
}

/** The most upgrades in flight at once. */
function maxInFlight(spans: readonly [number, number][]): number {
  return Math.max(
    ...spans.map(([start]) => spans.filter(([s, e]) => s <= start && start < e).length),
  );
}

describe('scenario 8: the operator rolls a release across three VMs (canary, then two at a time)', () => {
  let dir = '';
  let lab: LabState | undefined;
  let env: Record<string, string> = {};

  before(async () => {
    dir = await mkdtemp(join(repoRoot, '.molt', 'lab-s8-'));
    const t = performance.now();
    await molt([
      ...['lab', 'up', '--dir', dir, '--vms', '3', '--workers', '0'],
      ...['--no-kubernetes', '--fast', '--network', 'loopback'],
    ]);
    lab = await readLabStateFile(dir);
    console.log(`lab up with 3 VMs: ${String(Math.round((performance.now() - t) / 1000))} s`);
    env = JSON.parse(await molt(['lab', 'env', '--dir', dir, '-o', 'json'])) as Record<
      string,
      string
    >;
  });
  after(async () => {
    if (dir === '') return;
    await molt(['lab', 'down', '--dir', dir]).catch((e: unknown) => {
      console.log(`lab down: ${String(e)}`);
    });
    if (!keep) await rm(dir, { recursive: true, force: true });
  });

  it('upgrades every VM through a real reboot into slot B, canary first, at most two at once', async () => {
    const vms = lab?.vms ?? [];
    assert.equal(vms.length, 3, 'three VMs in lab.json');
    const from = new Map(
      await Promise.all(vms.map(async (v) => [v.name, await serialSize(v.serialLog)] as const)),
    );
    const t = performance.now();
    await molt(['lab', 'publish', '1.1.0', '--vm', '--dir', dir]);
    let id = '';
    for (let i = 0; id === '' && i < 120; i++) {
      const list = JSON.parse(
        await molt(['rollout', 'list', '-o', 'json'], env),
      ) as RolloutSummaryView[];
      id = list.find((r) => r.target.version === '1.1.0' && r.pool === 'vms')?.id ?? '';
      if (id === '') await new Promise((r) => setTimeout(r, 1_000)); // discovery runs every 2 s
    }
    assert.notEqual(id, '', 'the operator created a rollout of 1.1.0 for pool vms');
    const lines = (
      await molt(
        ['rollout', 'status', id, '--follow', '-o', 'json', '--reconnect-timeout', '600000'],
        env,
      )
    )
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as unknown);
    console.log(
      `rollout of 1.1.0 across 3 VMs: ${String(Math.round((performance.now() - t) / 1000))} s`,
    );
    const final = lines.at(-1) as RolloutView;
    const events = lines.slice(0, -1) as HistoryEventView[];
    assert.equal(final.state, 'Completed', JSON.stringify(final));
    assert.equal(final.counts.total, 3);
    assert.equal(final.counts.Succeeded, 3, JSON.stringify(final.counts));

    for (const v of vms) {
      const console_ = await readSerial(v.serialLog, from.get(v.name) ?? 0);
      assert.match(
        console_,
        /MOLT-BOOTED slot=B version=1\.1\.0/,
        `${v.name} booted 1.1.0 from slot B`,
      );
      const grub = /Booting `molt 1\.0\.0 \(slot A\)'/.test(await readSerial(v.serialLog, 0));
      if (grub)
        assert.match(console_, /Booting `molt 1\.1\.0 \(slot B\)'/, `${v.name}: GRUB chose slot B`);
    }

    const spans = intervals(events);
    assert.equal(
      spans.size,
      3,
      `three machine starts in the history: ${JSON.stringify([...spans])}`,
    );
    const byStart = [...spans.entries()].sort((a, b) => a[1][0] - b[1][0]);
    const t0 = byStart[0]?.[1][0] ?? 0;
    const rel = (ms: number): string => `${String(Math.round((ms - t0) / 1000))} s`;
    console.log(
      `order: ${byStart.map(([name, [start, end]]) => `${name} ${rel(start)}–${rel(end)}`).join(', ')}`,
    );
    const [canary, ...rest] = byStart;
    assert.ok(canary !== undefined);
    for (const [name, [start]] of rest)
      assert.ok(start >= canary[1][1], `${name} started after the canary ${canary[0]} finished`);
    assert.ok(
      maxInFlight([...spans.values()]) <= 2,
      `at most two in flight: ${JSON.stringify([...spans])}`,
    );
  });
});
