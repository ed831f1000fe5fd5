// SPDX-License-Identifier: Apache-2.0
// Fuzz targets (docs/patterns/testing.md): the machine config (`state/config.yaml`, read by the
// agent at start), through its loader.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { ErrorCode } from '../core/errors.ts';
import { accepted, fuzzParameters, fuzzText, mutatedJson, outcomeAsync } from '../testkit/fuzz.ts';
import { MachineConfig } from '../protocol/machine-config.ts';
import { loadMachineConfig } from './config.ts';

const machine = {
  node: 'cp-1',
  role: 'control-plane',
  bootloader: 'grub',
  api: { host: '127.0.0.1', port: 7443 },
  registry: { insecure: true, host: '127.0.0.1:5000', username: 'u', password: 'p' },
  etcd: {
    name: 'cp-1',
    peerUrl: 'http://127.0.0.1:2380',
    clientUrl: 'http://127.0.0.1:2379',
    initialCluster: 'cp-1=http://127.0.0.1:2380',
    endpoints: ['http://127.0.0.1:2379'],
  },
  kubernetes: {
    kubeconfig: 'agent.kubeconfig',
    drain: { timeoutSeconds: 60, onTimeout: 'quarantine-and-skip' },
  },
};
const worker = { node: 'w-1', role: 'worker', bootloader: 'systemd-boot' };

const root = await mkdtemp(join(tmpdir(), 'molt-fuzz-config-'));
await mkdir(join(root, 'state'));
after(() => rm(root, { recursive: true, force: true }));

describe('fuzz: configuration files', () => {
  it('the machine config loads into a value the schema accepts again, or MOLT_MACHINE_INVALID', async () => {
    const text = fc.oneof(
      fuzzText([stringify(machine), stringify(worker)], 300),
      mutatedJson([machine, worker], 3).map((tree) => stringify(tree)),
    );
    await fc.assert(
      fc.asyncProperty(text, async (yaml) => {
        // Owner-only, as the agent requires of a config that holds a registry password.
        await writeFile(join(root, 'state', 'config.yaml'), yaml, { mode: 0o600 });
        const r = await outcomeAsync(() => loadMachineConfig(root), 'loadMachineConfig');
        if (accepted(r, ErrorCode.MachineInvalid))
          assert.ok(MachineConfig.safeParse(r.value).success);
      }),
      fuzzParameters(200),
    );
  });
});
