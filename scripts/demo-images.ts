// SPDX-License-Identifier: Apache-2.0
// The demo's container-image chapter (docs/adr/0013): an image two Deployments run is
// rebuilt (a new digest behind the same `1.0.0-rev1` tag); an ImagePolicy object makes the operator
// write the new digest into the canary Deployment first, then, after its soak, into the other — the
// lab kubelets run the new pods, and no machine reboots. Checked like every other step.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { stringify } from 'yaml';
import type { LabState } from '../src/lab/state.ts';
import { buildImage, createRegistryClient, pushImage } from '../src/oci/index.ts';
import type { MachineView, RolloutSummaryView, RolloutView } from '../src/protocol/operator.ts';
import { api, follow, kubectl } from './demo-progress.ts';
import { bold, check, dim } from './demo-terminal.ts';

const TAG = '1.0.0-rev1';
// Namespaces of their own: the lab's `shop` holds its own workloads under PodDisruptionBudgets.
const NAMESPACES = ['catalog-canary', 'catalog'] as const;

/** Push build `n` of acme/web under its three tags; its digest. */
async function pushBuild(lab: LabState, n: number): Promise<string> {
  const client = createRegistryClient({ registry: lab.registry, insecure: true });
  try {
    const image = buildImage({
      labels: { 'org.opencontainers.image.version': `${TAG}-b${String(n)}` },
    });
    return await pushImage(client, 'acme/web', ['1.0.0', TAG, `${TAG}-b${String(n)}`], image);
  } finally {
    await client.close();
  }
}

/** The namespaces, a Deployment `web` in each on `image`, and the ImagePolicy following them. */
function objects(repository: string, image: string): string {
  const deployment = (namespace: string) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace, labels: { app: 'web' } },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'web', image }] },
      },
    },
  });
  const policy = {
    apiVersion: 'molt.dev/v1alpha1',
    kind: 'ImagePolicy',
    metadata: { name: 'web', namespace: 'molt-system' },
    spec: {
      repository,
      follow: 'rebuilds',
      workloads: [{ namespaces: [...NAMESPACES] }],
      canary: { namespaces: ['catalog-canary'], soak: '5s' },
    },
  };
  return [
    ...NAMESPACES.map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })),
    ...NAMESPACES.map(deployment),
    policy,
  ]
    .map((o) => stringify(o))
    .join('---\n');
}

/** Each Deployment's image, once every one has an available replica on it (at most `ms`). */
async function available(lab: LabState, image: string, ms: number): Promise<boolean> {
  const deadline = performance.now() + ms;
  for (;;) {
    const out = await Promise.all(
      NAMESPACES.map((ns) =>
        kubectl(
          lab,
          ...['get', 'deployment', 'web', '-n', ns, '-o'],
          'jsonpath={.spec.template.spec.containers[0].image} {.status.updatedReplicas} {.status.availableReplicas}',
        ).catch(() => ''),
      ),
    );
    if (out.every((l) => l === `${image} 1 1`)) return true;
    if (performance.now() > deadline) return false;
    await sleep(1000);
  }
}

const machineRollouts = async (lab: LabState): Promise<number> =>
  (await api<RolloutSummaryView[]>(lab, '/v1/rollouts')).filter((r) => r.images === undefined)
    .length;

/** The canary went first and soaked; no machine moved. */
async function checkOrder(
  lab: LabState,
  r: RolloutView | undefined,
  machinesBefore: number,
): Promise<void> {
  const canary = r?.machines.find((m) => m.machine === 'Deployment/catalog-canary/web');
  const rest = r?.machines.find((m) => m.machine === 'Deployment/catalog/web');
  check(
    Date.parse(canary?.finishedAt ?? '') + 5_000 <= Date.parse(rest?.startedAt ?? ''),
    'the canary finished and soaked 5 s before the other started',
  );
  const machines = await api<MachineView[]>(lab, '/v1/machines');
  check(
    (await machineRollouts(lab)) === machinesBefore &&
      machines.every((m) => m.observed?.version === '1.1.0'),
    'no machine rollout, no reboot: every machine still runs 1.1.0',
  );
}

/** Step 5; see the module comment. Without Kubernetes (`--no-kubernetes`) there is nothing to do. */
export async function imageRebuild(lab: LabState): Promise<void> {
  if (lab.kubeconfig === undefined || lab.kubectl === undefined) return;
  console.log(
    bold(
      '\n5. A container image is rebuilt (same tag, new digest); its workloads follow it — canary first, no reboot:',
    ),
  );
  const repository = `${lab.registry}/acme/web`;
  const b1 = await pushBuild(lab, 1);
  const from = `${repository}:${TAG}@${b1}`;
  const file = join(lab.dir, 'demo-images.yaml');
  await writeFile(file, objects(repository, from));
  await kubectl(lab, 'apply', '-f', file);
  check(
    await available(lab, from, 120_000),
    `Deployments web in ${NAMESPACES.join(' and ')} run ${TAG}@${b1.slice(0, 19)}…`,
  );
  const machinesBefore = await machineRollouts(lab);

  const b2 = await pushBuild(lab, 2);
  console.log(dim(`    pushed the rebuild: ${TAG} → ${b2.slice(0, 19)}…`));
  const [r] = await follow(lab, TAG, (x) => x[0]?.state === 'Completed', 5 * 60_000);
  check(r?.state === 'Completed', `image rollout ${r?.id ?? '?'} completed`);
  const to = `${repository}:${TAG}@${b2}`;
  check(
    await available(lab, to, 60_000),
    'both Deployments run the new digest, their pods available',
  );
  await checkOrder(lab, r, machinesBefore);
  const policies = await kubectl(lab, 'get', 'imagepolicies', '-n', 'molt-system');
  console.log(dim(policies.trimEnd().replace(/^/gm, '    ')));
}
