// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { emptyCounts, type MachineProgressView, type RolloutView } from '../protocol/operator.ts';
import {
  chart,
  LABEL_CHARS,
  rowLabel,
  startInstants,
  timeAxis,
  timelineRows,
  windowsOnAxis,
} from './timeline-layout.ts';

const at = (hhmm: string): string => `2026-11-24T${hhmm}:00.000Z`;
const ms = (hhmm: string): number => Date.parse(at(hhmm));

const rollout = (pool: string, machines: MachineProgressView[]): RolloutView => ({
  id: `${pool}-1.1.0`,
  pool,
  target: { version: '1.1.0', digest: 'sha256:0' },
  state: 'Active',
  createdAt: at('09:00'),
  counts: emptyCounts(machines.length),
  machines,
});

describe('the timeline’s rows', () => {
  const workers = rollout('workers', [
    {
      machine: 'w-2',
      phase: 'InFlight',
      startedAt: at('10:20'),
      decision: { action: 'in-flight', batch: 1 },
    },
    {
      machine: 'w-1',
      phase: 'Succeeded',
      startedAt: at('10:00'),
      finishedAt: at('10:10'),
      decision: { action: 'done', batch: 0 },
    },
    { machine: 'w-3', phase: 'Pending' },
  ]);

  it('has one row per started machine, earliest first, running ones ending now', () => {
    const rows = timelineRows([workers], ms('10:30'));
    assert.deepEqual(
      rows.map((r) => [r.machine.machine, r.batch, r.start, r.end]),
      [
        ['w-1', 'canary', ms('10:00'), ms('10:10')],
        ['w-2', 'batch 1', ms('10:20'), ms('10:30')],
      ],
    );
  });

  it('spans the axis from the first start to the latest of now, the ends and the next starts', () => {
    const rows = timelineRows([workers], ms('10:30'));
    const axis = timeAxis(rows, ms('10:30'), [ms('11:00')]);
    assert.deepEqual([axis.t0, axis.t1], [ms('10:00'), ms('11:00')]);
    assert.equal(axis.x(axis.t0), chart.label);
    assert.equal(axis.x(axis.t1), chart.width - 10);
  });

  it('cuts each pool’s windows to the axis and drops those outside it', () => {
    const windows = [
      {
        pool: 'workers',
        open: [
          { from: at('08:00'), to: at('10:15') },
          { from: at('12:00'), to: at('13:00') },
        ],
      },
      { pool: 'edge', open: [{ from: at('06:00'), to: at('07:00') }] },
    ];
    const cut = windowsOnAxis(windows, { t0: ms('10:00'), t1: ms('11:00') });
    assert.deepEqual(cut.get('workers'), [{ from: ms('10:00'), to: ms('10:15') }]);
    assert.deepEqual(cut.get('edge'), [], 'a pool with windows keeps its entry (the legend shows)');
  });

  it('lists each instant a waiting machine may start at once', () => {
    const decision = (notBefore?: string) => ({
      action: 'wait' as const,
      batch: 1,
      rollout: 'r',
      machine: 'm',
      ...(notBefore !== undefined && { notBefore }),
    });
    const plan = { decisions: [decision(at('11:00')), decision(), decision(at('11:00'))] };
    assert.deepEqual(startInstants(plan), [ms('11:00')]);
  });

  it('ends the bar of a machine a cancelled rollout left in flight at its last activity, marked', () => {
    const cancelled = { ...workers, state: 'Cancelled' as const };
    const rows = timelineRows([cancelled], ms('15:00'));
    const w2 = rows.find((r) => r.machine.machine === 'w-2');
    assert.deepEqual([w2?.end, w2?.cut], [ms('10:20'), true], 'not growing until now');
    assert.equal(rows.find((r) => r.machine.machine === 'w-1')?.cut, false);
    assert.equal(timelineRows([workers], ms('15:00')).at(-1)?.end, ms('15:00'));
  });

  it('leaves out the start instants of rollouts that are over', () => {
    const wait = (rollout: string) => ({
      action: 'wait' as const,
      batch: 1,
      rollout,
      machine: 'm',
      notBefore: at('11:00'),
    });
    const plan = { decisions: [wait('gone'), { ...wait('live'), notBefore: at('12:00') }] };
    assert.deepEqual(startInstants(plan, new Set(['live'])), [ms('12:00')]);
  });
});

describe('a timeline row’s label', () => {
  const done = (machine: string, batch?: number): MachineProgressView => ({
    machine,
    phase: 'Succeeded',
    startedAt: at('10:00'),
    finishedAt: at('10:10'),
    ...(batch !== undefined && { decision: { action: 'done', batch } }),
  });

  it('names a machine, its pool and release and its wave, linking its page', () => {
    const [row] = timelineRows([rollout('workers', [done('w-1', 0)])], ms('10:30'));
    assert.ok(row);
    assert.deepEqual(rowLabel(row), {
      text: 'w-1 · workers 1.1.0 · canary',
      title: 'w-1 · workers 1.1.0 · canary',
      link: '#/machine/w-1',
    });
  });

  it('leaves out a wave it does not know', () => {
    const [row] = timelineRows([rollout('workers', [done('w-1')])], ms('10:30'));
    assert.ok(row);
    assert.equal(rowLabel(row).text, 'w-1 · workers 1.1.0');
  });

  it('names a workload and its tag, links nowhere, and cuts a long one to fit with the whole as its title', () => {
    const image: RolloutView = {
      ...rollout('web/1.8.0-rev2', [done('Deployment/shop-production/storefront-web-frontend')]),
      target: { version: '1.8.0-rev2', digest: 'sha256:0' },
      images: { policy: 'web', repository: 'r.example/acme/web', units: {} },
    };
    const [row] = timelineRows([image], ms('10:30'));
    assert.ok(row);
    const label = rowLabel(row);
    assert.equal(label.title, 'Deployment/shop-production/storefront-web-frontend · 1.8.0-rev2');
    assert.equal(label.text.length, LABEL_CHARS);
    assert.ok(label.text.endsWith('…') && label.title.startsWith(label.text.slice(0, -1)));
    assert.equal(label.link, undefined);
  });
});
