// SPDX-License-Identifier: Apache-2.0
/**
 * Benchmark P15: how long a maintenance window must stay open for a rollout, when the operator
 * staged the release ahead of it (docs/adr/0019 §2) and when it did not. One lab fleet of six
 * workers (`molt lab machine`: real agents over mTLS, real slot writes and reboots of the agent
 * process), one pool following `beta`, at most 2 machines at a time, a daily window; the
 * operator in this process wired as `molt operator` is (etcd store, discovery over the real
 * docker-registry 2.8), with its default periods.
 *
 * Each run publishes a release whose root filesystem is 512 MiB of random bytes while the window
 * is shut, so the rollout waits for it. Unstaged (the peer: what every rollout did before): the
 * window opens at the next whole minute at least a minute away, and each start pulls, writes,
 * verifies and reboots. Staged (`stage: {ahead: true, concurrency: 2}`): the window opens at the
 * next whole minute at least two and a half minutes away; every machine pulls, writes and verifies the
 * release before then, and each start inside the window re-verifies the slot and reboots. The
 * window's length is from its opening to the last machine's upgrade finishing; the ratio is
 * staged / unstaged (target ≤ 0.5).
 *
 * The lab's registry is on loopback, where pulling 512 MiB costs about a second: both runs again
 * with the agents pulling through one shared 1 Gbit/s link (`throttle.ts`), as a site's machines
 * pull from its registry mirror. The `BENCH` line's first three keys are the lab's, the `gbit_`
 * ones the link's.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool, Rollout } from '../src/core/rollout/types.ts';
import { official, startLabFleet, type WorkerFleet } from '../src/lab/fleet/fleet.ts';
import { moltArgv } from '../src/testkit/molt-entry.ts';
import {
  startBenchOperator,
  type BenchOperator,
} from '../test/integration/operator/lab-operator.ts';
import { median, seconds } from './p7.ts';
import { startThrottledLink } from './throttle.ts';

const workers = 6;
const concurrency = 2;
const rootfsBytes = 512 * 1024 * 1024;
const pool = 'workers';

interface Run {
  readonly label: string;
  readonly version: string;
  /** The push complete → every machine staged (staged run only). */
  readonly stagedMs?: number;
  /** Whether every machine was staged before the window opened (staged run only). */
  readonly stagedInTime?: boolean;
  /** Window opening → the last machine's upgrade finished. */
  readonly windowMs: number;
  /** Each machine's start → finish inside the window. */
  readonly perMachineMs: readonly number[];
}

/** The next whole minute at least `leadMs` away. */
const nextMinute = (leadMs: number): Date =>
  new Date(Math.ceil((Date.now() + leadMs) / 60_000) * 60_000);

function windowPool(opens: Date, staged: boolean): Pool {
  return {
    name: pool,
    channel: 'beta',
    ...(staged && { stage: { ahead: true, concurrency } }),
    policies: [
      { kind: 'concurrency', limit: { count: concurrency } },
      {
        kind: 'window',
        windows: [
          {
            cron: `${String(opens.getUTCMinutes())} ${String(opens.getUTCHours())} * * *`,
            durationMs: 3_600_000,
          },
        ],
      },
    ],
  };
}

/** Ms from now until every machine of the rollout to `version` is staged; undefined if not by `opens`. */
async function allStaged(
  op: BenchOperator,
  version: string,
  opens: Date,
): Promise<number | undefined> {
  const from = Date.now();
  while (Date.now() < opens.getTime()) {
    const r = await op.rolloutTo(version, pool);
    if (Object.keys(r?.staged ?? {}).length === workers) return Date.now() - from;
    await sleep(250);
  }
  return undefined;
}

/** Where the agents pull from: the registry itself, or through a link of limited bandwidth. */
interface Link {
  readonly name: string;
  /** The host agents pull from; undefined: the fleet's registry. */
  readonly pullFrom?: string;
}

async function oneRun(
  fleet: WorkerFleet,
  link: Link,
  version: string,
  staged: boolean,
): Promise<Run> {
  const opens = nextMinute(staged ? 150_000 : 60_000);
  const op = await startBenchOperator(fleet, [windowPool(opens, staged)], {
    ...(link.pullFrom !== undefined && { pullFrom: link.pullFrom }),
  });
  try {
    await fleet.publish(
      version,
      { ...official, 'dev.molt.channels': 'beta' },
      {
        vmlinuz: randomBytes(4096),
        'initrd.img': randomBytes(2048),
        'rootfs.img': randomBytes(rootfsBytes),
      },
    );
    const stagedMs = staged ? await allStaged(op, version, opens) : undefined;
    const done: Rollout = await op.completed(
      version,
      pool,
      opens.getTime() - Date.now() + 1_800_000,
    );
    const progress = Object.values(done.machines);
    const finished = Math.max(...progress.map((p) => p.finishedAt ?? Number.NaN));
    return {
      label: `${link.name}, ${staged ? 'staged ahead' : 'not staged'}`,
      version,
      ...(staged && { stagedMs: stagedMs ?? Number.NaN, stagedInTime: stagedMs !== undefined }),
      windowMs: finished - opens.getTime(),
      perMachineMs: progress.map((p) => (p.finishedAt ?? Number.NaN) - (p.startedAt ?? Number.NaN)),
    };
  } finally {
    await op.stop();
  }
}

const cell = (x: string, w: number): string => x.padStart(w);
const rowOf = (r: Run): string =>
  `${r.label.padEnd(30)}${cell(r.version, 8)}${cell(r.stagedMs === undefined ? '-' : `${seconds(r.stagedMs)}${r.stagedInTime === true ? '' : ' (late)'}`, 26)}${cell(seconds(r.windowMs), 12)}${cell(seconds(median(r.perMachineMs)), 24)}`;

/** A shared link of 1 Gbit/s between the machines and the registry. */
const linkBytesPerSecond = 125_000_000;

/** Run P15 and print its table and `BENCH P15 …` line. */
export async function runP15(): Promise<void> {
  const fleet = await startLabFleet({ molt: moltArgv, workers, controlPlane: false });
  const [host = '', port = ''] = fleet.registry.host.split(':');
  const throttled = await startThrottledLink({ host, port: Number(port) }, linkBytesPerSecond);
  try {
    const direct: Link = { name: 'loopback' };
    const gbit: Link = { name: '1 Gbit/s link', pullFrom: throttled.host };
    const runs = [
      await oneRun(fleet, direct, '1.1.0', false),
      await oneRun(fleet, direct, '1.2.0', true),
      await oneRun(fleet, gbit, '1.3.0', false),
      await oneRun(fleet, gbit, '1.4.0', true),
    ] as const;
    const [unstaged, staged, linkUnstaged, linkStaged] = runs;
    const ratio = staged.windowMs / unstaged.windowMs;
    const linkRatio = linkStaged.windowMs / linkUnstaged.windowMs;
    const lines = [
      `P15: ${String(workers)} lab workers, one pool (channel beta, at most ${String(concurrency)} at a time, a daily window), a release with a ${String(rootfsBytes / 1024 / 1024)} MiB root filesystem published while the window is shut; real etcd store, docker-registry 2.8, operator defaults`,
      `pulled from the registry on loopback (the lab as it is), then through one shared 1 Gbit/s link (a site's machines and its registry mirror)`,
      '',
      `${'run'.padEnd(30)}${cell('release', 8)}${cell('staged before window (s)', 26)}${cell('window (s)', 12)}${cell('per machine median (s)', 24)}`,
      ...runs.map(rowOf),
      '',
      `loopback: the window stays open ${seconds(staged.windowMs)} s staged ahead against ${seconds(unstaged.windowMs)} s not: ratio ${ratio.toFixed(2)} (target ≤ 0.5)`,
      `1 Gbit/s: ${seconds(linkStaged.windowMs)} s against ${seconds(linkUnstaged.windowMs)} s: ratio ${linkRatio.toFixed(2)}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    process.stdout.write(
      `BENCH P15 window_s_staged=${seconds(staged.windowMs)} window_s_unstaged=${seconds(unstaged.windowMs)} ratio=${ratio.toFixed(2)} gbit_window_s_staged=${seconds(linkStaged.windowMs)} gbit_window_s_unstaged=${seconds(linkUnstaged.windowMs)} gbit_ratio=${linkRatio.toFixed(2)}\n`,
    );
  } finally {
    await throttled.close();
    await fleet.stop();
  }
}
