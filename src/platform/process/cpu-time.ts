// SPDX-License-Identifier: Apache-2.0
/**
 * What /proc says of a process's time: the CPU it used, and how long the host kept it waiting for
 * a CPU. Waits use them to tell a process that works slowly on a busy host from one that is stuck.
 */
import { readdir, readFile } from 'node:fs/promises';

/** Milliseconds per clock tick: USER_HZ is 100 on every Linux molt runs on. */
const tickMs = 10;

/** Milliseconds of CPU (user + system) used by `pid` and its descendants; 0 once it is gone. */
export async function treeCpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${String(pid)}/stat`, 'utf8').catch(() => '');
  // Fields after the command name (which may hold spaces): state is the 3rd, utime the 14th;
  // cutime and cstime keep the CPU of children that ended and were waited for (a restarted
  // component, a short-lived helper), so the total does not drop when one goes.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  let ms = [11, 12, 13, 14].reduce((n, i) => n + Number(fields[i] ?? 0) * tickMs, 0);
  const tasks = await readdir(`/proc/${String(pid)}/task`).catch(() => []);
  for (const task of tasks) {
    const children = await readFile(`/proc/${String(pid)}/task/${task}/children`, 'utf8').catch(
      () => '',
    );
    for (const child of children.split(' ').filter((c) => c !== ''))
      ms += await treeCpuMs(Number(child));
  }
  return Number.isFinite(ms) ? ms : 0;
}

/**
 * Milliseconds the busiest-waiting thread of `pid` has spent runnable but waiting for a CPU
 * (`/proc/<pid>/task/<tid>/schedstat`, its second field): how long the host kept the process
 * from running. A process that sleeps (a paused guest, a hung one waiting on I/O) does not add
 * to it; one the host starves does. 0 once it is gone.
 */
export async function runQueueWaitMs(pid: number): Promise<number> {
  const tasks = await readdir(`/proc/${String(pid)}/task`).catch(() => []);
  let most = 0;
  for (const task of tasks) {
    const stat = await readFile(`/proc/${String(pid)}/task/${task}/schedstat`, 'utf8').catch(
      () => '',
    );
    const waitedNs = Number(stat.split(' ')[1] ?? 0);
    if (Number.isFinite(waitedNs)) most = Math.max(most, waitedNs / 1e6);
  }
  return Math.round(most);
}
