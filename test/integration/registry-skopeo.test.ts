// SPDX-License-Identifier: Apache-2.0
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import {
  buildImage,
  buildIndex,
  createRegistryClient,
  pushImage,
  type OciRegistryClient,
} from '../../src/oci/index.ts';
import { startRegistry, type RunningRegistry } from '../../src/testkit/registry-process.ts';

const run = promisify(execFile);
const repo = 'acme/installer';

async function skopeo(...args: string[]): Promise<unknown> {
  const { stdout } = await run('skopeo', [
    ...args.slice(0, 1),
    '--tls-verify=false',
    ...args.slice(1),
  ]);
  return JSON.parse(stdout) as unknown;
}

interface Config {
  readonly created?: string;
  readonly config?: { readonly Labels?: Record<string, string> };
}

describe('cross-check with skopeo against docker-registry 2.8', () => {
  let registry: RunningRegistry;
  let client: OciRegistryClient;
  const releases = [
    {
      tags: ['1.8.0', '1.8.0-rev2', '1.8.0-rev2-b1042'],
      labels: { 'org.opencontainers.image.version': '1.8.0', 'dev.molt.channels': 'stable' },
      created: '2025-01-10T08:00:00Z',
    },
    {
      tags: ['1.9.0-rev1-b7'],
      labels: {
        'org.opencontainers.image.version': '1.9.0',
        'dev.molt.channels': 'beta,stable',
        'dev.molt.official': 'true',
      },
      created: '2025-02-11T09:30:00Z',
    },
    {
      tags: ['1.10.0'],
      labels: {
        'org.opencontainers.image.version': '1.10.0',
        'dev.molt.kubernetes': '>=1.30 <1.33',
      },
    },
  ];

  before(async () => {
    registry = await startRegistry();
    client = createRegistryClient({ registry: registry.host, insecure: true });
    for (const r of releases) {
      const amd = buildImage({
        labels: r.labels,
        ...(r.created !== undefined && { created: r.created }),
      });
      const arm = buildImage({
        labels: r.labels,
        platform: { os: 'linux', architecture: 'arm64' },
        ...(r.created !== undefined && { created: r.created }),
      });
      await pushImage(client, repo, r.tags, r.tags.length > 1 ? buildIndex([amd, arm]) : amd);
    }
  });
  after(async () => {
    await client.close();
    await registry.stop();
  });

  it('lists the same tags as skopeo list-tags', async () => {
    const theirs = (await skopeo('list-tags', `docker://${registry.host}/${repo}`)) as {
      Tags: string[];
    };
    const ours = await client.listTags(repo);
    assert.deepEqual(ours, [...theirs.Tags].sort());
    assert.equal(ours.length, 5);
  });

  it('reads the same labels and created time as skopeo inspect --config', async () => {
    for (const tag of await client.listTags(repo)) {
      const theirs = (await skopeo(
        'inspect',
        '--config',
        `docker://${registry.host}/${repo}:${tag}`,
      )) as Config;
      const image = await client.resolveImage(repo, tag);
      const ours = JSON.parse(
        Buffer.from(await client.getBlob(repo, image.config.digest)).toString(),
      ) as Config;
      assert.deepEqual(ours.config?.Labels, theirs.config?.Labels, tag);
      assert.equal(ours.created, theirs.created, tag);
      assert.ok(Object.keys(ours.config?.Labels ?? {}).length >= 2, tag);
    }
  });
});
