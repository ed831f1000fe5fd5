// SPDX-License-Identifier: Apache-2.0
/**
 * P12 (docs/adr/0013 §8): image rollouts at the scale of a small product. 200 Deployments
 * over 20 repositories, each followed by an image policy (`follow: rebuilds`, default settings),
 * watched by the real `molt operator` on a real control plane and registry (`p12-rig.ts`).
 *
 * - warm-up: until `GET /v1/images` shows every unit `current`;
 * - `warm_blob_gets`: the blob GETs the registry served (counted by the proxy in front of it,
 *   `p12-proxy.ts`) from one `GET /v1/images` of the warmed operator (all 20 repositories
 *   re-scanned; 5 s after the warm-up, so the loop's first passes are done) to 6 s later — its
 *   own passes' scans count too. Target 0: a warm scan HEADs tags;
 * - `first_update_s`: a rebuild `1.0.0-rev1-b2` pushed to one repository (moving `1.0.0-rev1` and
 *   `1.0.0`), then 100 ms polls of its Deployments until the first has the new digest in its pod
 *   template. Target ≤ 5 s. Then until all of that repository's Deployments have it (up to 60 s
 *   more), and no other repository's Deployment changed.
 *
 * `MOLT_P12_REPOSITORIES` / `MOLT_P12_PER_REPOSITORY` change the 20 × 10 (smoke runs).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { V1Deployment } from '@kubernetes/client-node';
import { createRegistryClient, pushImage } from '../src/oci/index.ts';
import { eventually } from '../src/platform/process/managed-process.ts';
import {
  countsSince,
  type RegistryCounts,
} from '../test/integration/kube/registry-counting-proxy.ts';
import {
  rebuildOf,
  repositoryName,
  startP12Rig,
  type P12Rig,
} from '../test/integration/kube/images-operator-rig.ts';

const repositories = Number(process.env['MOLT_P12_REPOSITORIES'] ?? 20);
const perRepository = Number(process.env['MOLT_P12_PER_REPOSITORY'] ?? 10);
const firstUpdateTimeoutMs = 60_000;
const warmWindowMs = 6_000;
/** After the warm-up, before the warm window: the loop's first passes (interval 2 s) are done. */
const settleMs = 5_000;

const since = (t0: number): number => (performance.now() - t0) / 1000;
const digestOf = (d: V1Deployment): string =>
  /@(sha256:[a-f0-9]{64})$/.exec(d.spec?.template.spec?.containers[0]?.image ?? '')?.[1] ?? '';

/** Until every unit of every policy is `current` and available; resolves with the unit count. */
async function warmUp(rig: P12Rig): Promise<number> {
  return eventually(
    async () => {
      const view = await rig.images();
      const units = view.policies.flatMap((p) => p.units);
      const off = units.filter((u) => u.decision.kind !== 'current' || !u.available);
      const errors = view.policies.flatMap((p) =>
        p.scan?.error === undefined ? [] : [p.scan.error],
      );
      if (units.length !== repositories * perRepository || off.length > 0)
        throw new Error(
          `${String(units.length)} units, ${String(off.length)} not current` +
            (off[0] === undefined
              ? ''
              : ` (${off[0].id}: ${off[0].decision.kind} ${off[0].decision.reason ?? ''}${off[0].available ? '' : ' unavailable'})`) +
            (errors[0] === undefined ? '' : `; scan: ${errors[0]}`),
        );
      return units.length;
    },
    { timeoutMs: 300_000, intervalMs: 1_000 },
  );
}

/** Poll repository 0's Deployments every 100 ms until `want` of them run `digest`; the seconds. */
async function watchUpdates(
  rig: P12Rig,
  w: { digest: string; want: number; from: number; timeoutMs: number },
): Promise<{ seconds: number; updated: number }> {
  let updated = 0;
  while (performance.now() - w.from < w.timeoutMs) {
    updated = (await rig.deployments(0)).filter((d) => digestOf(d) === w.digest).length;
    if (updated >= w.want) return { seconds: since(w.from), updated };
    await sleep(100);
  }
  return { seconds: Number.NaN, updated };
}

const row = (k: string, v: string): string => `${k.padEnd(60)}${v}\n`;
const asked = (c: RegistryCounts): string =>
  `${String(c.tagList)} tag lists, ${String(c.manifestHead)} HEAD / ${String(c.manifestGet)} GET manifests, ` +
  `${String(c.blobGet)} GET blobs`;

export async function runP12(): Promise<void> {
  const workloads = repositories * perRepository;
  const out: string[] = [
    `P12 — ${String(workloads)} workloads over ${String(repositories)} repositories, follow: rebuilds\n`,
  ];
  const print = (): void => {
    process.stdout.write(out.join(''));
    out.length = 0;
  };
  let t = performance.now();
  const rig = await startP12Rig({ repositories, perRepository, namespaces: 4 });
  try {
    out.push(
      row('setup (control plane, registry, pushes, Deployments)', `${since(t).toFixed(1)} s`),
    );
    t = performance.now();
    const units = await warmUp(rig);
    out.push(
      row('warm-up (operator start → every unit current, available)', `${since(t).toFixed(1)} s`),
    );
    // The loop's first passes scan too, and may have started cold beside the API's first call.
    await sleep(settleMs);
    const before = rig.proxy.counts();
    out.push(
      row(`  registry asked until ${String(settleMs / 1000)} s after it (cold)`, asked(before)),
    );
    t = performance.now();
    const view = await rig.images();
    const scanS = since(t);
    // And a few of the operator's own passes (interval 2 s, discovery 5 s by default): whatever
    // else re-scans a followed repository while nothing moves is counted too.
    await sleep(Math.max(0, warmWindowMs - (performance.now() - t)));
    const warm = countsSince(before, rig.proxy.counts());
    out.push(
      row(
        'warm re-scan (GET /v1/images)',
        `${scanS.toFixed(2)} s, ${String(view.policies.length)} repositories`,
      ),
      row(
        `  registry asked in ${String(warmWindowMs / 1000)} s from it`,
        `${asked(warm)} (${(warm.tagList / repositories).toFixed(1)} scans of each)`,
      ),
    );
    print();

    const client = createRegistryClient({ registry: rig.registry.host, insecure: true });
    const afterWarm = rig.proxy.counts();
    t = performance.now();
    const b2 = await pushImage(
      client,
      repositoryName(0),
      ['1.0.0', '1.0.0-rev1', '1.0.0-rev1-b2'],
      rebuildOf(0, 2),
    );
    await client.close();
    out.push(row(`push ${repositoryName(0)}:1.0.0-rev1-b2`, `${since(t).toFixed(2)} s`));
    const pushed = performance.now();
    const first = await watchUpdates(rig, {
      digest: b2,
      want: 1,
      from: pushed,
      timeoutMs: firstUpdateTimeoutMs,
    });
    if (Number.isNaN(first.seconds)) {
      print();
      process.stderr.write(rig.operator.output().slice(-3000));
      throw new Error(
        `no Deployment of ${repositoryName(0)} took ${b2} within ${String(firstUpdateTimeoutMs / 1000)} s ` +
          `of the push: does this molt have the image driver (git log --grep 'the image driver')?`,
      );
    }
    out.push(row('push → first Deployment spec updated', `${first.seconds.toFixed(2)} s`));
    const all = await watchUpdates(rig, {
      digest: b2,
      want: perRepository,
      from: pushed,
      timeoutMs: first.seconds * 1000 + 60_000,
    });
    out.push(
      row(
        `push → all ${String(perRepository)} of its Deployments updated`,
        Number.isNaN(all.seconds)
          ? `not in 60 s (${String(all.updated)} updated)`
          : `${all.seconds.toFixed(2)} s`,
      ),
    );
    const start = new Set(rig.digests);
    const stray = (await rig.allDeployments()).filter(
      (d) => d.metadata?.labels?.['app'] !== 'app-00' && !start.has(digestOf(d)),
    ).length;
    out.push(
      row('other repositories’ Deployments changed', String(stray)),
      row('registry asked from the push on', asked(countsSince(afterWarm, rig.proxy.counts()))),
    );
    print();
    process.stdout.write(
      `BENCH P12 first_update_s=${first.seconds.toFixed(2)} warm_blob_gets=${String(warm.blobGet)} workloads=${String(units)}\n`,
    );
  } finally {
    await rig.stop();
  }
}
