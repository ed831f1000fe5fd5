// SPDX-License-Identifier: Apache-2.0
/**
 * P13's by-hand side, and the commands both sides share: the lab's kubectl and the molt CLI, run
 * as a person runs them (child processes, the lab's environment), and the phases of an agent's
 * operation read off its events.
 *
 * By hand is the most manual path molt offers that never cordons or drains by itself: kubectl
 * drains; `molt node upgrade --stage` only pulls, writes and verifies the slot (a staged upgrade skips
 * every disrupting phase); `molt node reboot` completes it — its Cordoning finds the Node cordoned
 * already (so it sets no cordon of its own, and its Uncordoning has none to undo) and its
 * Draining finds nothing left to evict; then the person waits for the Node Ready on the new
 * kubelet and uncordons.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { LabState } from '../src/lab/state.ts';
import type { AgentEvent } from '../src/protocol/agent.ts';

const run = promisify(execFile);
const moltBin = join(import.meta.dirname, '../src/bin/molt.ts');
const Minutes = 60_000;

/** The environment `molt lab env` gives, with the CLI config kept in the lab's directory. */
export function labEnv(lab: LabState): Record<string, string> {
  return {
    MOLT_CONFIG: join(lab.dir, 'molt-config.yaml'),
    MOLT_OPERATOR: lab.operator.api,
    MOLT_CA: join(lab.pki, 'ca.pem'),
    MOLT_CERT: join(lab.pki, 'operator.pem'),
    MOLT_KEY: join(lab.pki, 'operator.key'),
    KUBECACHEDIR: join(lab.dir, 'kube-cache'),
  };
}

/** `molt ARGS` against the lab; its standard output. */
export async function molt(lab: LabState, args: readonly string[]): Promise<string> {
  const r = await run(process.execPath, [moltBin, ...args], {
    env: { ...process.env, ...labEnv(lab) },
    maxBuffer: 64 * 2 ** 20,
    timeout: 30 * Minutes,
  });
  return r.stdout;
}

/** The lab's kubectl on its admin kubeconfig; its standard output. */
export async function kubectl(lab: LabState, args: readonly string[]): Promise<string> {
  if (lab.kubectl === undefined || lab.kubeconfig === undefined)
    throw new Error('the lab runs no Kubernetes');
  const r = await run(lab.kubectl, ['--kubeconfig', lab.kubeconfig, ...args], {
    env: { ...process.env, ...labEnv(lab) },
    maxBuffer: 16 * 2 ** 20,
    timeout: 20 * Minutes,
  });
  return r.stdout;
}

/** The events `-o json` printed, one a line. */
export const eventsOf = (ndjson: string): AgentEvent[] =>
  ndjson
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as AgentEvent);

/** Each phase's seconds, from its start to the next phase's start (or the result). */
export function phaseSeconds(events: readonly AgentEvent[]): [string, number][] {
  const marks = events.filter(
    (e) => (e.kind === 'phase' && e.status === 'started') || e.kind === 'result',
  );
  return marks.slice(0, -1).map((e, i) => {
    const next = marks[i + 1]?.time ?? e.time;
    return [e.phase, (Date.parse(next) - Date.parse(e.time)) / 1000];
  });
}

/** Poll (1 s) until `node` is Ready with `kubelet`. */
async function readyOn(lab: LabState, node: string, kubelet: string): Promise<void> {
  const jsonpath =
    'jsonpath={.status.conditions[?(@.type=="Ready")].status} {.status.nodeInfo.kubeletVersion}';
  const deadline = Date.now() + 15 * Minutes;
  let seen = '';
  while (Date.now() < deadline) {
    seen = await kubectl(lab, ['get', 'node', node, '-o', jsonpath]).catch((e: unknown) =>
      String(e),
    );
    if (seen.trim() === `True ${kubelet}`) return;
    await sleep(1_000);
  }
  throw new Error(`Node ${node} not Ready on kubelet ${kubelet} in 15 min: ${seen}`);
}

export interface ByHand {
  readonly start: number;
  readonly seconds: number;
  /** Each step's seconds, in order. */
  readonly steps: readonly [string, number][];
  /** The events of the staged upgrade and of the reboot that completed it. */
  readonly events: readonly AgentEvent[];
}

/** Upgrade `node` to `image` by hand (see the file comment); times every step. */
export async function upgradeByHand(
  lab: LabState,
  o: { node: string; image: string; kubelet: string },
): Promise<ByHand> {
  const steps: [string, number][] = [];
  const start = Date.now();
  const step = async <T>(name: string, f: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    const r = await f();
    steps.push([name, (performance.now() - t) / 1000]);
    return r;
  };
  const t0 = performance.now();
  await step('kubectl drain', () =>
    kubectl(lab, [
      ...['drain', o.node, '--ignore-daemonsets', '--delete-emptydir-data'],
      '--timeout=15m',
    ]),
  );
  const staged = await step('molt node upgrade --stage (pull, write, verify)', () =>
    molt(lab, ['node', 'upgrade', o.node, '--image', o.image, '--stage', '--follow', '-o', 'json']),
  );
  const rebooted = await step('molt node reboot (stop, reboot, health, commit)', () =>
    molt(lab, [
      ...['node', 'reboot', o.node, '--follow', '-o', 'json'],
      ...['--reconnect-timeout', String(15 * Minutes)],
    ]),
  );
  // The reboot continues the staged operation under its id: its stream may repeat the staged part.
  const seen = new Set<string>();
  const events = [...eventsOf(staged), ...eventsOf(rebooted)].filter((e) => {
    const key = `${e.operationId}:${String(e.seq)}`;
    const fresh = !seen.has(key);
    seen.add(key);
    return fresh;
  });
  const result = events.at(-1)?.result?.result;
  if (result !== 'Succeeded') throw new Error(`the by-hand reboot ended ${String(result)}`);
  await step(`Node Ready on ${o.kubelet}`, () => readyOn(lab, o.node, o.kubelet));
  await step('kubectl uncordon', () => kubectl(lab, ['uncordon', o.node]));
  return { start, seconds: (performance.now() - t0) / 1000, steps, events };
}
